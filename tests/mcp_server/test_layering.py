"""bot/mcp sits beside bot/slack and bot/cli (DESIGN.md): it may import app, turns and below, never slack or cli."""

from __future__ import annotations

from tests.test_import_direction import BOT, imported


def test_the_mcp_server_imports_neither_slack_nor_the_cli() -> None:
    reached = {
        f"{path.relative_to(BOT)} -> {name}"
        for path in sorted((BOT / "mcp").rglob("*.py"))
        for name in imported(path)
        if name.startswith(("bot.slack", "bot.cli"))
    }
    assert reached == set()
