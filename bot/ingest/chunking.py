"""Splits one page of text into overlapping passages at sentence boundaries. Pure functions.

Passages stay within their page, so every passage keeps the page it came from, except the one sentence a page break
cuts in two (`bridge`): it is also kept whole, cited by the page it starts on, where all of it begins.
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


# A page break can cut a sentence in two: "An employee who adopts a child may take" at the foot of one page, "sixteen
# weeks of paid leave." at the top of the next, and neither page's passages hold it whole. The bridge passage holds
# only that sentence: from the start of the last sentence on page N to the end of the first sentence completed on
# page N+1. Everything in it begins on page N, so citing N is right; a sentence that starts on page N+1 is only in
# page N+1's own passages, so a fact wholly overleaf is always cited by the page that holds it.
BRIDGE_FALLBACK_CHARS = 150
_STOP = re.compile(r"[.!?;][\"'”’)\]]*(?=\s|$)")  # a sentence end, as `sentences` splits (closing quotes kept)
_ENDED = re.compile(r"[.!?;][\"'”’)\]]*$")
_PARAGRAPH = re.compile(r"\n\s*\n")


def bridge(page: str, next_page: str, *, size: int = CHUNK_CHARS) -> str | None:
    """The sentence a page break cuts: the unfinished end of `page` and the opening of `next_page` up to its first
    sentence end, at most `size` characters; None when no sentence is cut (`page` ends one, or something new starts
    overleaf: a capital, a heading, a list item)."""
    ending, opening = clean(page), clean(next_page)
    if not ending or not opening or _ENDED.search(ending) or not _continues(opening):
        return None
    last = ending.rsplit("\n", 1)[-1].strip()
    if is_heading(last):
        return None  # a heading at a page's foot is the next page's section (its chunks' context), not a sentence
    start, end = _sentence_start(ending), _sentence_end(opening)
    piece = " ".join(ending[start or 0 :].split())  # the sentence left unfinished on page N
    rest = " ".join(opening[:end].split())  # its end on page N+1
    if start is not None and end is not None:
        head = _last_words(piece, size // 2)  # a very long sentence: its words nearest the break
        tail = _first_words(rest, size - len(head) - 1)
    else:
        # No sentence start found on page N, or no end on page N+1 (a long unpunctuated run): a short piece either
        # side of the break. Still right to cite N: it starts on page N, and the words it takes from page N+1 come
        # before any sentence end, paragraph, heading or list item there, so they continue the run page N left open.
        head, tail = _last_words(piece, BRIDGE_FALLBACK_CHARS), _first_words(rest, BRIDGE_FALLBACK_CHARS)
    return f"{head} {tail}" if head and tail else None


def _continues(opening: str) -> bool:
    """Whether a page's first words can continue a sentence: not a capital (a new sentence, or a name: trust first),
    a heading or a list item."""
    first_line = opening.split("\n", 1)[0].strip()
    return not (first_line[:1].isupper() or is_heading(first_line) or _LIST_MARK.match(first_line))


def _sentence_start(text: str) -> int | None:
    """Where the last sentence of a page starts: after its last sentence end, paragraph break or heading, or at its
    last list item (unpunctuated items end at their line's end); None when the page has none of these."""
    starts = [match.end() for match in _STOP.finditer(text)] + [match.end() for match in _PARAGRAPH.finditer(text)]
    offset = 0
    for line in text.split("\n"):
        if _LIST_MARK.match(line.strip()):
            starts.append(offset)
        offset += len(line) + 1
        if is_heading(line):
            starts.append(offset)
    return max(starts) if starts else None


def _sentence_end(text: str) -> int | None:
    """Where the first sentence of a page ends: at its first sentence end, or before the first paragraph break,
    heading or list item that follows; None when there is none."""
    stop = _STOP.search(text)
    ends = ([stop.end()] if stop else []) + [match.start() for match in _PARAGRAPH.finditer(text)]
    offset = 0
    for number, line in enumerate(text.split("\n")):
        if number and (_LIST_MARK.match(line.strip()) or is_heading(line)):
            ends.append(offset)
        offset += len(line) + 1
    return min(ends) if ends else None


def _last_words(text: str, budget: int) -> str:
    """The end of `text`, at most `budget` characters, starting at a word."""
    text = text.strip()
    if len(text) <= budget:
        return text
    cut = text.find(" ", len(text) - budget)
    return text[cut + 1 :] if cut >= 0 else text[-budget:]


def _first_words(text: str, budget: int) -> str:
    """The start of `text`, at most `budget` characters, ending at a word."""
    text = text.strip()
    if len(text) <= budget:
        return text
    cut = text.rfind(" ", 0, budget + 1)
    return text[:cut] if cut > 0 else text[:budget]


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
