"""The citation rule, applied as the answer is written: model text in, pieces safe to show out. Pure, no I/O.

    stream = CitationStream(conversation.sources, link_for=options.link_for)
    stream.feed("Refunds within 14 days [S")   # -> ["Refunds within 14 days"]  ("[S" is held back)
    stream.feed("1].")                          # -> [" ", Citation(label=1, ...), "."]
    stream.close()                              # -> []  (trailing whitespace is never shown)

A piece is plain text or one checked citation. This is the ONE implementation of "which marker is valid and what it
becomes": `bot.citations.render` feeds the whole answer through it, the streaming answer feeds it delta by delta, and
the tail that more text could still turn into a marker, label, link or sandbox path (`undecided_from`) is held back
until it is decided. So a half-written marker (`[S`, `[S1`) is never shown, and `stream.text` equals the rendered
answer however the text was cut (the surface compares the two to decide whether the streamed text must be replaced).

What the rule does with each thing the model writes:
- `[S3]` naming a source shown in this conversation: citation `[n]`, one label per document page, in order of use;
  naming none: removed (with the space before it: "fact [S9]." shows "fact.");
- a bracketed number the model writes itself (`[1]`, `[2, 3]`): removed the same way, never passed for a citation;
- a Markdown link or image: its label and its real address, `label (https://...)`; `[S1](url)` is a citation
  followed by the address in plain text;
- a sandbox file (`sandbox:/mnt/data/x.csv`, or a link to one): its file name, or its link's label;
- `[NOT_IN_DOCUMENTS]`: removed; whitespace at the start and end of the answer: never shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.citation_marks import MAY_HOLD_TOKEN, TOKEN, LinkFor, half_marker_from, labels_for, refs_in, undecided_from
from bot.models import Chunk, Citation, MarkerSpan

Piece = str | Citation


class CitationStream:
    """The checked pieces of one model response's text, fed delta by delta."""

    def __init__(self, known: Mapping[str, Chunk], *, link_for: LinkFor) -> None:
        self._known = known
        self._link_for = link_for
        self._pending = ""  # raw model text not yet decided
        self._space = ""  # whitespace held back: shown only when more text follows
        self._started = False  # leading whitespace of the answer is never shown
        self._after_label: int | None = None  # the label just shown, when nothing has followed it yet
        self._citations: dict[tuple[str, int | None, str | None], Citation] = {}
        self._dropped: list[str] = []
        self.markers: list[MarkerSpan] = []  # where each label stands in `text`
        self.text = ""  # everything shown so far: `[n]` in place of each valid marker

    @property
    def citations(self) -> tuple[Citation, ...]:
        return tuple(self._citations.values())

    @property
    def dropped(self) -> tuple[str, ...]:
        """Markers and labels removed because they named no shown source, first occurrence order."""
        return tuple(dict.fromkeys(self._dropped))

    def feed(self, delta: str) -> list[Piece]:
        """The pieces `delta` makes safe to show (possibly none, while a marker may still be written)."""
        self._pending += delta
        cut = undecided_from(self._pending)
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        return self._decide(ready)

    def close(self, last: str = "") -> list[Piece]:
        """The response ended (with `last`): what was held back is decided as it stands (a `[S` never closed is not a
        marker)."""
        ready, self._pending = self._pending + last, ""
        pieces = self._decide(ready)
        self._space = ""
        return pieces

    def _decide(self, raw: str) -> list[Piece]:
        pieces: list[Piece] = []
        if MAY_HOLD_TOKEN.search(raw) is None:  # plain words, as most deltas are
            self._text(raw, pieces)
            return pieces
        cursor = 0
        for match in TOKEN.finditer(raw):
            before = raw[cursor : match.start()]
            if not self._kept(match):  # what it leaves must not complete a half-written marker before it
                before = before[: half_marker_from(before)]
            self._text(before, pieces)
            cursor = match.end()
            self._token(match, pieces)
        self._text(raw[cursor:], pieces)
        return pieces

    def _kept(self, match: re.Match[str]) -> bool:
        """Whether a token shows as a checked citation or a link. Every other one is removed or replaced by shorter
        text, which must not join what stands before it into a marker or label: "[[S9]3]" is not "[3]"."""
        if match.lastgroup == "marker":
            return any(ref in self._known for ref in refs_in(match.group()))
        return match.lastgroup == "link"

    def _token(self, match: re.Match[str], pieces: list[Piece]) -> None:
        kind = match.lastgroup
        if kind == "marker":
            self._labels(refs_in(match.group()), pieces)
        elif kind == "label":
            self._dropped.append(match.group())
            self._labels([], pieces)
        elif kind == "sandbox_link":
            self._replaced(match.group("sandbox_label"), pieces)
        elif kind == "sandbox_path":
            self._replaced(match.group("sandbox_file"), pieces)
        elif kind == "link":
            label, url = match.group("link_label").strip(), match.group("url")
            self._replaced(url if label in ("", url) else f"{label} ({url})", pieces)
        # not_answered: removed

    def _replaced(self, text: str, pieces: list[Piece]) -> None:
        """What a link or sandbox path becomes, read by the same rule (a label may hold a marker). Its text never
        ends half a marker: "[[](/mnt/data/z)3]" would show as a bracketed number nobody checked."""
        text = text[: half_marker_from(text)]
        if text:
            pieces.extend(self._decide(text))
        else:
            self._labels([], pieces)

    def _text(self, raw: str, pieces: list[Piece]) -> None:
        if not self._started:
            raw = raw.lstrip()
            self._started = bool(raw)
        body = raw.rstrip()
        if body:
            self._show(self._space + body, pieces)
            self._space = raw[len(body) :]
        else:
            self._space += raw

    def _labels(self, refs: list[str], pieces: list[Piece]) -> None:
        self._started = True
        labels = labels_for(refs, self._known, self._citations, self._link_for, self._dropped)
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
            piece = f"[{label}]"
            self.markers.append(MarkerSpan(start=len(self.text), end=len(self.text) + len(piece), label=label))
            self.text += piece
            self._after_label = label

    def _show(self, text: str, pieces: list[Piece]) -> None:
        pieces.append(text)
        self.text += text
        self._after_label = None
