"""Citations checked while the answer is written: model text in, pieces safe to show out. Pure, no I/O.

    stream = CitationStream(conversation.sources, link_for=options.link_for)
    stream.feed("Refunds within 14 days [S")   # -> ["Refunds within 14 days"]  ("[S" is held back)
    stream.feed("1].")                          # -> [" ", Citation(label=1, ...), "."]
    stream.close()                              # -> []  (trailing whitespace is never shown)

A piece is plain text or one checked citation. Text from the last unclosed `[` (or `［`, `【`, `〔`) on is held back
until its closing bracket arrives, so a half-written marker (`[S`, `[S1`) is never shown; a complete marker is shown
only when it names a source already shown in this conversation, and is dropped otherwise. Labels, dedupe and
whitespace follow `bot.citations.render` exactly, so `stream.text` equals the rendered answer when the final text is
the streamed one (the surface compares the two to decide whether the streamed text must be replaced).
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.citations import (
    CLOSERS,
    MARKER,
    NOT_ANSWERED,
    OPENERS,
    LinkFor,
    _labels_for,  # the labelling rule `render` uses: one definition, so the two agree
    marker_refs,
)
from bot.models import Chunk, Citation

Piece = str | Citation
HOLD_LIMIT = 120  # an opening `[` further back than this is prose, not a marker still being written


class CitationStream:
    """The checked pieces of one model response's text, fed delta by delta."""

    def __init__(self, known: Mapping[str, Chunk], *, link_for: LinkFor) -> None:
        self._known = known
        self._link_for = link_for
        self._pending = ""  # raw model text not yet decided
        self._space = ""  # whitespace held back: shown only when more text follows (render strips and rstrips)
        self._started = False  # leading whitespace of the answer is never shown
        self._after_label: int | None = None  # the label just shown, when nothing has followed it yet
        self._citations: dict[tuple[str, int | None], Citation] = {}
        self._dropped: list[str] = []
        self.text = ""  # everything shown so far, as `render` writes it: `[n]` in place of each valid marker

    @property
    def citations(self) -> tuple[Citation, ...]:
        return tuple(self._citations.values())

    @property
    def dropped(self) -> tuple[str, ...]:
        """Refs of markers removed because they named no shown source, first occurrence order."""
        return tuple(dict.fromkeys(self._dropped))

    def feed(self, delta: str) -> list[Piece]:
        """The pieces `delta` makes safe to show (possibly none, while a marker may still be written)."""
        self._pending += delta
        cut = _hold_from(self._pending)
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        return self._decide(ready)

    def close(self) -> list[Piece]:
        """The response ended: what was held back is plain text after all (a `[S` never closed is not a marker)."""
        ready, self._pending = self._pending, ""
        pieces = self._decide(ready)
        self._space = ""
        return pieces

    def _decide(self, raw: str) -> list[Piece]:
        pieces: list[Piece] = []
        cursor = 0
        for match in MARKER.finditer(raw):
            self._text(raw[cursor : match.start()], pieces)
            cursor = match.end()
            self._marker(match.group(0), pieces)
        self._text(raw[cursor:], pieces)
        return pieces

    def _text(self, raw: str, pieces: list[Piece]) -> None:
        raw = raw.replace(NOT_ANSWERED, "")
        if not self._started:
            raw = raw.lstrip()
            self._started = bool(raw)
        body = raw.rstrip()
        if body:
            self._show(self._space + body, pieces)
            self._space = raw[len(body) :]
        else:
            self._space += raw

    def _marker(self, marker: str, pieces: list[Piece]) -> None:
        self._started = True
        labels = _labels_for(marker_refs(marker), self._known, self._citations, self._link_for, self._dropped)
        if not labels:  # every source it names is unknown: "fact [S9]." shows as "fact."
            self._space = self._space.rstrip(" \t")
            return
        by_label = {citation.label: citation for citation in self._citations.values()}
        for label in labels:
            if self._after_label == label and not self._space:
                continue  # "[S1][S1]", or two markers of one page side by side
            if self._space:
                self._show(self._space, pieces)
                self._space = ""
            pieces.append(by_label[label])
            self.text += f"[{label}]"
            self._after_label = label

    def _show(self, text: str, pieces: list[Piece]) -> None:
        pieces.append(text)
        self.text += text
        self._after_label = None


def _hold_from(pending: str) -> int:
    """Where the undecided tail starts: the last opening bracket (`[`, `［`, `【`, ...) with no closing one after it,
    unless it is too far back to be a marker."""
    opening = max(pending.rfind(bracket) for bracket in OPENERS)
    if opening == -1 or any(bracket in pending[opening:] for bracket in CLOSERS) or len(pending) - opening > HOLD_LIMIT:
        return len(pending)
    return opening

