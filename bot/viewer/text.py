"""A kept text (mail, web page, Markdown, plain text) and the stretch of it a view shows. File I/O and pure parts.

A long text is shown as the `WINDOW` characters around the passage (cut at line ends), not whole: a person checks a
passage, and a page of megabytes would not load on a phone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

WINDOW = 12_000  # characters shown around a located passage; the start of the text when it is not located
MAX_TEXT_BYTES = 64 * 1024 * 1024


class TextUnreadable(Exception):
    """The kept text cannot be read."""


@dataclass(frozen=True)
class Excerpt:
    """What a text view shows: `before`, the marked passage (`marked`, empty when not located), `after`; whether
    text was left out before or after."""

    before: str
    marked: str
    after: str
    cut_before: bool
    cut_after: bool


def kept_text(path: Path, *, limit: int = MAX_TEXT_BYTES) -> str:
    """The text of a kept copy: UTF-8 (with or without a byte-order mark), else Windows-1252 as ingest reads it."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit)
    except OSError as exc:
        raise TextUnreadable(exc.strerror or str(exc)) from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def excerpt(text: str, span: tuple[int, int] | None, *, window: int = WINDOW) -> Excerpt:
    """The part of `text` around characters `span` (first, last inclusive), or its start when there is no span."""
    if span is None:
        shown = text[:window]
        return Excerpt(before=shown, marked="", after="", cut_before=False, cut_after=len(text) > len(shown))
    first, last = span
    room = max(0, window - (last - first + 1)) // 2
    start = _line_start(text, max(0, first - room), first)
    stop = _line_end(text, min(len(text), last + 1 + room), last + 1)
    return Excerpt(
        before=text[start:first],
        marked=text[first : last + 1],
        after=text[last + 1 : stop],
        cut_before=start > 0,
        cut_after=stop < len(text),
    )


def _line_start(text: str, at: int, passage: int) -> int:
    """`at`, moved on to the next line's start when one begins soon enough and before the passage."""
    found = text.find("\n", at, min(passage, at + 400)) if at else -1
    return found + 1 if found >= 0 else at


def _line_end(text: str, at: int, passage_end: int) -> int:
    """`at`, moved back to the end of its line when that is near and after the passage."""
    found = text.rfind("\n", max(passage_end, at - 400), at)
    return found if found >= 0 else at
