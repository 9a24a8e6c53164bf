"""Citation checking: the model's [S#] markers -> numbered labels, links and a position map. Pure functions.

A marker is valid only when it names a source shown to the model in this conversation; anything else is removed
and never rendered as a link. Citations are unique by (document, page), numbered in order of first use.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from bot.models import Chunk, Citation, MarkerSpan

# Anything a reader could take for a source marker: an opening bracket (ASCII, full-width, CJK or mathematical), S
# (or a letter that looks like it) and a number in any case, spacing, width or script, up to the closing bracket on
# that line. [S3], [s3], [S 3], [S3, S7], [S3; S7], [S1-S3], [S1–S3], ［S3］, 【S3】, [S٣], [S³], [S\u200b3],
# [S3, page 4]: each is read as markers, and what names no shown source is removed. Left unclosed ("[S3 and a long
# aside ..."), the opening bracket and its id are read as a marker all the same.
OPENERS = "[［【〔〖〘〚⟦"
CLOSERS = "]］】〕〗〙〛⟧"
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"  # zero-width characters: a reader sees nothing between S and 3
_GAP = rf"[\s{_INVISIBLE}]*"
_DIGIT = r"[\d¹²³⁰⁴-⁹₀-₉]"  # \d is every script's decimal digits; superscripts and subscripts are not among them
MARKER = re.compile(
    rf"[{re.escape(OPENERS)}]{_GAP}[SsＳｓЅѕ]{_GAP}{_DIGIT}+"
    rf"(?:[^{re.escape(OPENERS + CLOSERS)}\n]{{0,60}}[{re.escape(CLOSERS)}])?"
)
_REF = re.compile(r"(?<![a-z])S\s*(\d+)(?:\s*[-–—]\s*S?\s*(\d+))?", re.IGNORECASE)
_UNSEEN = str.maketrans("", "", _INVISIBLE)
_MAX_RANGE = 10  # [S1-S5] names S1 to S5; a longer range is read as its two ends only
# A Markdown link or image the model writes: shown as its label and its real address, never a label over a link.
_MD_LINK = re.compile(r"!?\[([^\]\n]{0,200})\]\(\s*([^()\s]{1,2000})(?:\s+\"[^\"\n]{0,200}\")?\s*\)")
# The instructions ask the model to start with this when the sources do not answer the question.
NOT_ANSWERED = "[NOT_IN_DOCUMENTS]"
# Every pattern that can start at any "[" is bounded: unbounded, a model writing "[[[[..." costs quadratic time.
_SANDBOX_LINK = re.compile(r"!?\[([^\]]{0,200})\]\((?:sandbox:)?/mnt/data/[^)]{0,500}\)")
_SANDBOX_PATH = re.compile(r"(?:sandbox:)?/mnt/data/(?:[^\s)\]]*/)?([^\s)\]/]*)")
_DOUBLE_SPACE = re.compile(r"(?<=\S)[ \t]{2,}")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([.,;:!?])")

LinkFor = Callable[[Chunk], "str | None"]


@dataclass(frozen=True)
class Rendered:
    """An answer ready to show: text with [n] labels, its unique citations and where each label stands."""

    text: str
    citations: tuple[Citation, ...]
    markers: tuple[MarkerSpan, ...]
    dropped: tuple[str, ...]  # markers removed because they named no shown source


_KEPT_AS_TEXT = (".html", ".htm", ".eml")


def display_name(file: str) -> str:
    """`orders.xlsx.pdf` -> `orders.xlsx` (a converted file shows its original name), `page.html.txt` -> `page.html`
    (a web page or mail kept as its text); `handbook.pdf` unchanged."""
    stem, dot, ext = file.rpartition(".")
    if dot and ext.lower() == "pdf" and "." in stem:
        return stem
    if dot and ext.lower() == "txt" and stem.lower().endswith(_KEPT_AS_TEXT):
        return stem
    return file


def kind_of(chunk: Chunk) -> Literal["page", "table", "text"]:
    if chunk.tabular:
        return "table"
    return "text" if chunk.page is None else "page"


def marker_refs(text: str) -> list[str]:
    """Every S# named by a marker, in order of appearance, repeats included."""
    return [ref for match in MARKER.finditer(text) for ref in refs_in(match.group())]


def refs_in(marker: str) -> list[str]:
    """The S# ids one marker names: `[s1–S3]` -> S1, S2, S3; `［Ｓ３］` -> S3."""
    refs: list[str] = []
    for match in _REF.finditer(unicodedata.normalize("NFKC", marker).translate(_UNSEEN)):
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        step = 1 if last >= first else -1
        numbers = range(first, last + step, step) if abs(last - first) < _MAX_RANGE else (first, last)
        refs.extend(f"S{number}" for number in numbers)
    return refs


def unknown_refs(text: str, known: Mapping[str, Chunk]) -> list[str]:
    """Markers naming no source shown to the model, first occurrence order."""
    return list(dict.fromkeys(ref for ref in marker_refs(text) if ref not in known))


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
    return any(ref in part and alone.search(part) for chunk in chunks for part in (chunk.file, chunk.context, chunk.text))


def says_not_answered(text: str) -> bool:
    return NOT_ANSWERED in text


def needs_correction(text: str, known: Mapping[str, Chunk], *, sources_shown: bool) -> bool:
    """True when the answer names an unknown source, or states things with no marker although sources were shown."""
    if unknown_refs(text, known):
        return True
    return sources_shown and not marker_refs(text) and not says_not_answered(text) and bool(text.strip())


def scrub_sandbox(text: str) -> str:
    """Remove code-sandbox paths (`sandbox:/mnt/data/x.csv`, `/mnt/data/x.csv`): a reader cannot open them."""
    text = _SANDBOX_LINK.sub(lambda m: m.group(1), text)
    text = _SANDBOX_PATH.sub(lambda m: m.group(1), text)
    return text


def undisguise_links(text: str) -> str:
    """`[the policy](https://x)` -> `the policy (https://x)`: a reader always sees where a link the model wrote goes."""

    def shown(match: re.Match[str]) -> str:
        label, url = match.group(1).strip(), match.group(2)
        if MARKER.fullmatch(f"[{label}]"):  # [S1](https://x): the marker stays a marker
            return f"[{label}] ({url})"
        return url if label in ("", url) else f"{label} ({url})"

    return _MD_LINK.sub(shown, text)


def render(text: str, known: Mapping[str, Chunk], *, link_for: LinkFor) -> Rendered:
    """Replace valid [S#] markers with [n] labels (one per document page), drop the rest, scrub sandbox paths, and
    show every link the model wrote with its real address."""
    text = text.replace(NOT_ANSWERED, "")
    scrubbed = scrub_sandbox(text)
    text = undisguise_links(_tidy(scrubbed) if scrubbed != text else text).strip()
    out = ""
    cursor = 0
    citations: dict[tuple[str, int | None], Citation] = {}
    markers: list[MarkerSpan] = []
    dropped: list[str] = []
    for match in MARKER.finditer(text):
        out += text[cursor : match.start()]
        cursor = match.end()
        labels = _labels_for(refs_in(match.group()), known, citations, link_for, dropped)
        if not labels:  # "fact [S9]." becomes "fact." rather than "fact ."
            out = out.rstrip(" \t")
        for label in labels:
            piece = f"[{label}]"
            if out.endswith(piece):  # "[S1][S1]", or two markers on one page side by side
                continue
            markers.append(MarkerSpan(start=len(out), end=len(out) + len(piece), label=label))
            out += piece
    out += text[cursor:]
    return Rendered(
        text=out,
        citations=tuple(citations.values()),
        markers=tuple(markers),
        dropped=tuple(dict.fromkeys(dropped)),
    )


def _labels_for(
    refs: list[str],
    known: Mapping[str, Chunk],
    citations: dict[tuple[str, int | None], Citation],
    link_for: LinkFor,
    dropped: list[str],
) -> list[int]:
    labels: list[int] = []
    for ref in refs:
        chunk = known.get(ref)
        if chunk is None:
            dropped.append(ref)
            continue
        key = (chunk.file, chunk.cited_page)
        if key not in citations:
            citations[key] = citation_for(chunk, label=len(citations) + 1, link_for=link_for)
        label = citations[key].label
        if label not in labels:
            labels.append(label)
    return labels


def citation_for(chunk: Chunk, *, label: int, link_for: LinkFor) -> Citation:
    """The reference a person sees for one chunk."""
    return Citation(
        label=label,
        file=chunk.file,
        title=display_name(chunk.file),
        page=chunk.cited_page,
        container=chunk.container,
        kind=kind_of(chunk),
        url=link_for(chunk),
    )


def _tidy(text: str) -> str:
    # Scrubbed paths leave double spaces and `word .` gaps behind; indentation at line starts is kept.
    return _SPACE_BEFORE_PUNCT.sub(r"\1", _DOUBLE_SPACE.sub(" ", text))
