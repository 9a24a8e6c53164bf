"""Imports point the way DESIGN.md's module table says: the agent reaches retrieval only through its protocol (the
word functions both use live in bot.text), and bot.text imports nothing of ours."""

from __future__ import annotations

import ast
from pathlib import Path

BOT = Path(__file__).resolve().parent.parent / "bot"


def imported(path: Path) -> set[str]:
    """Every `bot...` module `path` imports, with the names taken from it (`bot.retrieval:Retriever`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bot"):
            found.update(f"{node.module}:{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("bot"))
    return found


def test_the_agent_uses_retrieval_only_through_its_protocol() -> None:
    reached = {
        f"{path.relative_to(BOT)} -> {name}"
        for path in sorted((BOT / "agent").rglob("*.py"))
        for name in imported(path)
        if name.startswith("bot.retrieval")
    }
    assert {line for line in reached if not line.endswith(" -> bot.retrieval:Retriever")} == set()


def test_the_shared_word_functions_import_nothing_of_ours() -> None:
    assert imported(BOT / "text.py") == set()
