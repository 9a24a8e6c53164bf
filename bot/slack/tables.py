"""Markdown tables: Slack's legacy text (mrkdwn) has none, its `markdown` block and streams do.

has_table(text)          whether an answer holds a table (a `| a | b |` row over a `| --- | --- |` rule)
TableHold().feed(piece)  streamed markdown held back while a table is being written, so it arrives whole
"""

from __future__ import annotations

import re

_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def has_table(text: str) -> bool:
    """Whether `text` holds a markdown table: a row that starts with `|` followed by its `---` rule."""
    lines = text.splitlines()
    return any(
        line.lstrip().startswith("|") and "|" in rule and _RULE.match(rule)
        for line, rule in zip(lines, lines[1:], strict=False)
    )


class TableHold:
    """Holds streamed markdown from the first `|` row of a table until a line that is not a row (or the end), so a
    person never sees a table half-written: its rows arrive in one piece. Text outside tables passes at once."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        """Take the next piece; return what may be shown now."""
        self._held += text
        cut = _hold_from(self._held)
        shown, self._held = self._held[:cut], self._held[cut:]
        return shown

    def flush(self) -> str:
        """The end of the answer: whatever is held."""
        held, self._held = self._held, ""
        return held


def _hold_from(text: str) -> int:
    """Where the text that must wait begins (len(text): nothing waits)."""
    lines = text.split("\n")
    position, hold = 0, None
    for index, line in enumerate(lines):
        complete, stripped = index < len(lines) - 1, line.lstrip()
        if stripped.startswith("|") or (not complete and not stripped):  # a row, or a line not yet begun
            hold = position if hold is None else hold
        else:  # a line that is not a row: any table above it has ended
            hold = None
        position += len(line) + 1
    return len(text) if hold is None else hold
