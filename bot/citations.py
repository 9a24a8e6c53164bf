"""Citation checking: the model's [S#] markers -> numbered labels, links and a position map. Pure functions.

A marker is valid only when it names a source shown to the model in this conversation; anything else is removed
and never rendered as a link, and so is a bracketed number the model writes itself. The rule lives in one place,
`bot.citation_stream.CitationStream`: `render` feeds it the whole answer, the streamed answer feeds it delta by delta.
Citations are unique by (document, page), numbered in order of first use.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.citation_marks import (
    LABEL,
    MARKER,
    NOT_ANSWERED,
    LinkFor,
    citation_for,
    display_name,
    kind_of,
    marker_refs,
    refs_in,
)
from bot.citation_stream import CitationStream
from bot.models import Chunk, Citation, MarkerSpan

__all__ = ["MARKER", "NOT_ANSWERED", "LinkFor", "citation_for", "display_name", "kind_of", "marker_refs", "refs_in"]


@dataclass(frozen=True)
class Rendered:
    """An answer ready to show: text with [n] labels, its unique citations and where each label stands."""

    text: str
    citations: tuple[Citation, ...]
    markers: tuple[MarkerSpan, ...]
    dropped: tuple[str, ...]  # markers and labels removed because they named no shown source


def render(text: str, known: Mapping[str, Chunk], *, link_for: LinkFor) -> Rendered:
    """The whole answer through the one citation rule (`CitationStream`): valid [S#] markers become [n] labels (one
    per document page), every other marker or bracketed number is removed, sandbox paths are scrubbed, and every
    link the model wrote shows its real address."""
    stream = CitationStream(known, link_for=link_for)
    stream.close(text)
    return Rendered(
        text=stream.text,
        citations=stream.citations,
        markers=tuple(stream.markers),
        dropped=stream.dropped,
    )


def unknown_refs(text: str, known: Mapping[str, Chunk]) -> list[str]:
    """Markers naming no source shown to the model, then the bracketed numbers it wrote itself (`[1]`, which only
    Folio may write), first occurrence order."""
    unknown = [ref for ref in marker_refs(text) if ref not in known]
    return list(dict.fromkeys([*unknown, *(match.group() for match in LABEL.finditer(text))]))


def written_by_documents(text: str, known: Mapping[str, Chunk]) -> list[str]:
    """The sources cited in `text` whose own id is written inside some shown source (its text, title or context).

    The ids S1, S2, ... are Folio's: a document that writes one out (`REF: S2 ... CONTENT: 0 days`) is trying to
    steer which source the model cites. The check cannot tell what a page supports without reading it, but it can
    refuse to vouch for a citation a document could have dictated.
    """
    cited = [ref for ref in dict.fromkeys(marker_refs(text)) if ref in known]
    return [ref for ref in cited if _written_in(ref, known.values())]


def _written_in(ref: str, chunks: Iterable[Chunk]) -> bool:
    """Whether some chunk writes `ref` standing alone, as a forged block writes it (`S2`, not `S20`). A substring test
    first rules out almost every chunk at C speed: a long conversation's sources are not all run through a regex."""
    alone = re.compile(rf"(?<!\w){re.escape(ref)}(?!\w)")
    return any(
        ref in part and alone.search(part) for chunk in chunks for part in (chunk.file, chunk.context, chunk.text)
    )


def says_not_answered(text: str) -> bool:
    return NOT_ANSWERED in text


def needs_correction(text: str, known: Mapping[str, Chunk], *, sources_shown: bool) -> bool:
    """True when the answer names an unknown source, or states things with no marker although sources were shown."""
    if unknown_refs(text, known):
        return True
    return sources_shown and not marker_refs(text) and not says_not_answered(text) and bool(text.strip())
