"""Prompt templates and tool schemas, kept as files beside this loader.

Templates use `$name` placeholders (string.Template), so braces in prompts need no escaping.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

_DIR = Path(__file__).resolve().parent
READ = "read_document"  # offered only where there is a file to read


@cache
def load(name: str) -> str:
    """The text of `prompts/NAME.md`."""
    return (_DIR / f"{name}.md").read_text(encoding="utf-8").strip()


def fill(name: str, /, **values: object) -> str:
    """`prompts/NAME.md` with its `$placeholders` filled in."""
    return Template(load(name)).substitute({key: str(value) for key, value in values.items()})


@cache
def _notes() -> dict[str, str]:
    return json.loads((_DIR / "notes.json").read_text(encoding="utf-8"))


def note(key: str, /, **values: object) -> str:
    """A short tool-output note for the model (`notes.json`), filled in."""
    return Template(_notes()[key]).substitute({key: str(value) for key, value in values.items()})


@cache
def _tools() -> list[dict[str, Any]]:
    return json.loads((_DIR / "tools.json").read_text(encoding="utf-8"))


@cache
def request_tools(*, code_interpreter: bool, readable: tuple[str, ...] = ()) -> tuple[dict[str, Any], ...]:
    """The tools as every request sends them, shared (not copied per call): serialize them, never change them.
    `read_document` only in a conversation with files of its own (shared in its thread), their names its choices."""
    chosen = []
    for tool in _tools():
        if tool["type"] == "code_interpreter" and not code_interpreter:
            continue
        if tool.get("name") == READ:
            if not readable:
                continue
            tool["parameters"]["properties"]["title"]["enum"] = list(readable)
        chosen.append(tool)
    return tuple(chosen)


def tool_definitions(*, code_interpreter: bool) -> list[dict[str, Any]]:
    """The tools sent with every call (flat function tools; code_interpreter only when switched on)."""
    chosen = list(request_tools(code_interpreter=code_interpreter))
    return copy.deepcopy(chosen)  # callers may not change the cached schemas
