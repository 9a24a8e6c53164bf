"""Habits of bot/ a reader relies on (STYLE.md 13 and 14): the code formats as `ruff format` formats it, with no
`# fmt: skip` or `# fmt: off` holding a long line in place, and a group of parameters that travel together is one
value (a frozen dataclass), not a longer signature. Each check is a pure function over source text, so the tests
below also feed it bad snippets: a check that could never fail would prove nothing."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

BOT = Path(__file__).resolve().parent.parent / "bot"

MAX_PARAMETERS = 7  # excluding self/cls; *args and **kwargs count one each (a `**clients` bag is still parameters)
# Functions allowed more, by "path:Qualified.name", each with why. Remove a line once its function is back under.
ALLOWED: dict[str, str] = {}  # "module.py:function": why it may take more
FORMAT_PRAGMA = re.compile(r"\bfmt:\s*(skip|off)\b")


def format_pragmas(source: str) -> list[int]:
    """Lines of `source` with a `# fmt: skip` or `# fmt: off` comment (in a comment only: a string may say it)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [token.start[0] for token in tokens if token.type == tokenize.COMMENT and FORMAT_PRAGMA.search(token.string)]


def parameter_counts(source: str) -> dict[str, int]:
    """Every function and method of `source` by qualified name (`Class.method`, `outer.inner`), with how many
    parameters it takes: self/cls not counted, *args and **kwargs one each."""
    counts: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", in_class=True)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = child.args
                names = [each.arg for each in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
                bound = in_class and bool(names) and names[0] in ("self", "cls")
                count = len(names) - bound + (arguments.vararg is not None) + (arguments.kwarg is not None)
                counts[f"{prefix}{child.name}"] = count
                visit(child, f"{prefix}{child.name}.", in_class=False)
            else:
                visit(child, prefix, in_class)

    visit(ast.parse(source), "", in_class=False)
    return counts


def too_long(source: str, limit: int = MAX_PARAMETERS) -> dict[str, int]:
    """The functions of `source` taking more than `limit` parameters."""
    return {name: count for name, count in parameter_counts(source).items() if count > limit}


def _sources() -> dict[str, str]:
    return {path.relative_to(BOT).as_posix(): path.read_text(encoding="utf-8") for path in sorted(BOT.rglob("*.py"))}


def test_no_format_pragma_holds_code_in_place_in_bot() -> None:
    found = {f"{name}:{line}" for name, source in _sources().items() for line in format_pragmas(source)}
    assert found == set(), "code formats as `ruff format` formats it: take a long signature's values into one value"


def test_no_function_in_bot_takes_more_than_the_limit_of_parameters() -> None:
    found = {
        f"{name}:{function}": count
        for name, source in _sources().items()
        for function, count in too_long(source).items()
        if f"{name}:{function}" not in ALLOWED
    }
    assert found == {}, f"more than {MAX_PARAMETERS} parameters: pass the ones that travel together as one value"


def test_every_allowed_exception_is_still_needed() -> None:
    counts = {
        f"{name}:{function}": count
        for name, source in _sources().items()
        for function, count in too_long(source).items()
    }
    stale = set(ALLOWED) - set(counts)
    assert stale == set(), "back under the limit (or gone): remove these from ALLOWED"


def test_the_pragma_check_finds_a_skip_and_an_off_comment_but_not_a_string() -> None:
    bad = 'def f(a, b):  # fmt: skip\n    return a\n\n\n# fmt: off\nX = [1,\n  2]\n# fmt: on\nY = "# fmt: skip"\n'
    assert format_pragmas(bad) == [1, 5]
    assert format_pragmas("def f(a, b):\n    return a  # formatted as ruff formats it\n") == []


def test_the_parameter_check_counts_methods_nested_functions_and_bags() -> None:
    bad = """
class Site:
    def __init__(self, a, b, c, d, e, f, g, h): ...

    @classmethod
    def of(cls, a, b, c, d, e, f, g): ...


async def serve(settings, *, host, port, stop, started, shared, on_ready, **clients):
    def inner(a, /, b, *rest, c, d, e, f): ...
"""
    assert parameter_counts(bad) == {"Site.__init__": 8, "Site.of": 7, "serve": 8, "serve.inner": 7}
    assert too_long(bad) == {"Site.__init__": 8, "serve": 8}
    assert too_long("def fine(a, b, *, c=1): ...\n") == {}
