"""The model's function calls, read defensively: whatever the model writes as arguments (invalid JSON, nesting too
deep to parse, megabytes of text, the wrong types) ends in a ValueError whose message the model is shown, never in
an exception that fails the turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_ARGUMENTS_CHARS = 10_000  # a query needs a few hundred characters; longer arguments are refused before parsing
MAX_QUERY_CHARS = 1_000
RECORDED_CHARS = 1_000  # of each argument kept in a turn's record of its tool calls


@dataclass(frozen=True)
class FunctionCall:
    """One function call from a response: its call_id, tool name and raw JSON arguments."""

    call_id: str
    name: str
    arguments: str

    def parsed(self) -> dict[str, Any]:
        """The arguments as a dict; ValueError saying what is wrong when they are not a JSON object."""
        if len(self.arguments) > MAX_ARGUMENTS_CHARS:
            raise ValueError(
                f"the arguments are {len(self.arguments)} characters long; at most {MAX_ARGUMENTS_CHARS} are accepted"
            )
        try:
            value = json.loads(self.arguments or "{}")
        except RecursionError:  # json raises this, not a ValueError, for nesting deeper than the interpreter's stack
            raise ValueError("the arguments are nested too deeply") from None
        except ValueError as exc:  # invalid JSON, or an integer of more digits than Python converts
            raise ValueError(f"the arguments are not valid JSON ({str(exc)[:100]})") from None
        if not isinstance(value, dict):
            raise ValueError("arguments must be a JSON object")
        return value

    def query(self) -> str:
        """The non-empty `query` argument, as text that can be sent on; ValueError otherwise."""
        query = self.parsed().get("query")
        if not isinstance(query, str) or not query.strip():
            raise ValueError("the argument 'query' must be a non-empty string")
        if len(query) > MAX_QUERY_CHARS:
            raise ValueError(
                f"the query is {len(query)} characters long; at most {MAX_QUERY_CHARS} are accepted: "
                "search with a few focused words"
            )
        try:
            query.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate ("\ud800") parses, but no request could carry it on
            raise ValueError("the query is not valid text") from None
        return query.strip()

    def recorded(self) -> dict[str, str]:
        """The arguments as the turn records them (for logs and `--json`): strings, each cut to a bounded length."""
        try:
            parsed = self.parsed()
            shown = {key: value if isinstance(value, str) else json.dumps(value) for key, value in parsed.items()}
        except (ValueError, RecursionError):
            shown = {"arguments": self.arguments}
        return bounded(shown)


def bounded(arguments: dict[str, str]) -> dict[str, str]:
    """Each argument cut to RECORDED_CHARS, and made encodable."""
    return {_text(key, 100): _text(value, RECORDED_CHARS) for key, value in arguments.items()}


def _text(text: str, limit: int) -> str:
    return text[:limit].encode("utf-8", "replace").decode("utf-8")
