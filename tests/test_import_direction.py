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


def _module_name(path: Path) -> str:
    parts = path.relative_to(BOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(path: Path, modules: set[str]) -> dict[str, bool]:
    """The `bot` modules `path` imports when it runs (not under TYPE_CHECKING), each with whether the import sits
    inside a function (True) or at the top of the module (False)."""
    found: dict[str, bool] = {}

    def add(name: str, in_function: bool) -> None:
        if name in modules:
            found[name] = found.get(name, True) and in_function

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and _type_only(node):
            for child in node.orelse:
                visit(child, in_function)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bot") and not node.level:
            for alias in node.names:  # `from bot.slack import private` imports the module bot.slack.private
                add(
                    f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module,
                    in_function,
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, in_function)
        inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    found.pop(_module_name(path), None)
    return found


def import_graph() -> dict[str, dict[str, bool]]:
    """Every module of bot/ -> the bot modules it imports at run time (True: only inside a function)."""
    paths = {_module_name(path): path for path in sorted(BOT.rglob("*.py"))}
    modules = set(paths)
    return {name: runtime_imports(path, modules) for name, path in paths.items()}


def circles(graph: dict[str, dict[str, bool]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return groups


def test_no_import_circle_in_bot_not_even_through_an_import_inside_a_function() -> None:
    """An import written inside a function counts as much as one at the top: one that closes a circle only dodges
    it (the module graph must stay a tree of layers, DESIGN.md "Modules")."""
    assert circles(import_graph()) == []


def test_the_graph_walker_finds_a_circle_closed_inside_a_function() -> None:
    graph = {"bot.a": {"bot.b": False}, "bot.b": {"bot.c": False}, "bot.c": {"bot.a": True}, "bot.d": {}}
    assert circles(graph) == [["bot.a", "bot.b", "bot.c"]]
