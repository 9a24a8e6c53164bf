"""Splits one page of text into overlapping passages at sentence boundaries. Pure functions.

Passages stay within their page, so every passage keeps the page it came from, except one per page break
(`bridge`): a sentence or paragraph that runs on overleaf is also kept whole, cited by the page it starts on.
"""

from __future__ import annotations

import re

# A short paragraph: BM25 then scores the sentences that answer, not the whole page around them (on the shared
# corpus, 500/100 found the truth page in the top 5 for 70% of questions; 1000/200 60%, whole pages 64%).
CHUNK_CHARS = 500
OVERLAP_CHARS = 100  # carried into the next passage so an answer cut at a boundary is whole in one of them

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_BLANK_LINES = re.compile(r"\n{3,}")


def clean(text: str) -> str:
    """Page text with trailing spaces and runs of blank lines removed."""
    text = text.replace("\r\n", "\n").replace("\x00", "")
    return _BLANK_LINES.sub("\n\n", _TRAILING_SPACE.sub("\n", text)).strip()


def sentences(text: str, *, limit: int) -> list[str]:
    """The sentences of `text`; one longer than `limit` is cut at word boundaries."""
    units: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip()
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            units.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if sentence:
            units.append(sentence)
    return units


def split_page(text: str, *, size: int = CHUNK_CHARS, overlap: int = OVERLAP_CHARS) -> list[str]:
    """Passages of about `size` characters, each starting with up to `overlap` characters of the previous one."""
    units = sentences(clean(text), limit=size)
    passages: list[str] = []
    current: list[str] = []
    fresh = 0  # units in `current` that the previous passage did not already hold
    for unit in units:
        if fresh and sum(len(part) + 1 for part in current) + len(unit) > size:
            passages.append(" ".join(current))
            current = _tail(current, overlap)
            fresh = 0
        current.append(unit)
        fresh += 1
    if fresh:
        passages.append(" ".join(current))
    return passages


# A page break cuts a paragraph in two, and neither page's passages hold it whole: "Copayments ..." at the foot of one
# page, the figures at the top of the next. The bridge passage holds the end of a page (its last sentence at least)
# and the opening of the next, and is cited by the page it starts on, where a reader finds its beginning
# (ground truth hit@5 0.80 -> 0.84, paraphrases 0.75 -> 0.79; a tail of 100 or 250 characters scored lower).
BRIDGE_TAIL_CHARS = 200


def bridge(last_passage: str, next_page: str, *, size: int = CHUNK_CHARS, tail: int = BRIDGE_TAIL_CHARS) -> str | None:
    """The passage running over a page break: the end of a page's `last_passage` (its last sentence at least, up to
    `tail` characters), then the opening sentences of `next_page` up to `size` characters; None when nothing follows."""
    ending = sentences(last_passage, limit=size)
    kept = _tail(ending, tail) or ending[-1:]
    used = sum(len(unit) + 1 for unit in kept)
    opening: list[str] = []
    for unit in sentences(clean(next_page), limit=size):
        if used + len(unit) > size and opening:
            break
        opening.append(unit)
        used += len(unit) + 1
    return " ".join([*kept, *opening]) if kept and opening else None


def _tail(units: list[str], budget: int) -> list[str]:
    """The last units of a passage that fit in `budget` characters (the overlap)."""
    kept: list[str] = []
    used = 0
    for unit in reversed(units):
        if used + len(unit) > budget:
            break
        kept.insert(0, unit)
        used += len(unit) + 1
    return kept


# --- section headings ---------------------------------------------------------------------------------------------
# A passage deep in a section rarely repeats the section's name ("Prior Authorization", "Out-Of-Network Providers"),
# though questions use it. Each chunk's context carries the heading it falls under (a contextual chunk header), so
# the name is searchable with every passage of the section, across page breaks too.
HEADING_CHARS = 90
HEADING_BLOCK_CHARS = 200
_HEADING_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_LIST_MARK = re.compile(r"^[•·\-*–▪◦]|^\d+[.)]")


def is_heading(line: str) -> bool:
    """A short line in Title Case or CAPITALS without sentence punctuation at its end, e.g. `Prescription Drugs`."""
    line = line.strip()
    if not 3 < len(line) <= HEADING_CHARS or line[-1] in ".,;!?" or _LIST_MARK.match(line):
        return False
    words = [word for word in _HEADING_WORD.findall(line) if len(word) > 3]  # "of", "for", "and" may stay lower
    return bool(words) and line[0].isupper() and all(word[0].isupper() for word in words)


def section_headings(page_text: str, passages: list[str], current: str) -> tuple[list[str], str]:
    """The heading each passage starts under (`current` continues from the previous page), and the last one seen."""
    text = clean(page_text)
    marks: list[tuple[int, str]] = []
    offset, previous = 0, False
    for line in text.split("\n"):
        heading = is_heading(line)
        if heading and previous:  # a heading that wraps onto the next line, or a heading and its sub-heading
            at, words = marks[-1]
            marks[-1] = (at, f"{words} {' '.join(line.split())}"[:HEADING_BLOCK_CHARS])
        elif heading:
            marks.append((offset, " ".join(line.split())))
        offset += len(line) + 1
        previous = heading
    found: list[str] = []
    for passage in passages:
        start = text.find(passage[:40])
        under = [heading for at, heading in marks if at <= start] if start >= 0 else []
        found.append(under[-1] if under else current)
    return found, marks[-1][1] if marks else current
