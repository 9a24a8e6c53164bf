"""Which words of a question a passage matches, and the part of the passage worth quoting. Pure functions.

A search-only answer has no model to read the passages, so two decisions rest on the question's content words
(stopwords dropped, crudely stemmed, the same way the keyword search reads them):
- whether a passage answers at all (`Match.strong`): BM25 scores are unbounded and not comparable across questions,
  while "the passage holds most of what was asked about" is. On the shared corpus the top passage of every one of
  the 50 ground-truth questions is strong; of 15 off-topic questions ("who is the CEO of Larkspur?") asked of the
  shared and the sample corpus, 28 of the 30 searches find none (the two that do ask about Contoso's employees).
- what to quote (`quote_window`): the sentences around the best-matching words, not the start of the chunk.
A passage holds a word when it holds the word, a variant of it ("reimbursed" / "reimbursement") or a common synonym
(`text.alternatives`: "reimburse" / "expense", "cover" / "pay for"). `reading` adds what the question asks beyond its
words: "how much" or "the copay" want a number (NUMBER), and "not covered" a passage that says what is not (NOT).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from bot.models import Chunk
from bot.text import alternatives, asks_for, negates, stem, stem_text, terms, variant

QUOTE_CHARS = 320  # the longest quote; about three lines of a wide terminal
ELLIPSIS = "…"
HEADING_CHARS = 60  # a shorter line followed by a capital stands alone (a heading); a longer one was wrapped

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“(\[]?[A-Z0-9])")
_LIST_NUMBER = re.compile(r"^\(?\d{1,3}[.)]$")  # "1." before a heading is not a sentence of its own

NUMBER = "#number"  # stands for "how much", "the copay": a passage holds it when it holds a number
NOT = "#not"  # stands for "not" in the question: a passage holds it when it says "not" before one of the words
AMOUNT_WORDS = frozenset({"much", "many"})
READING_CREDIT = 0.5  # what NUMBER and NOT are worth in a match: weak evidence, most passages hold a digit
SYNONYM_CREDIT = 0.5  # a synonym is weaker evidence than the word: at full credit 1 of 12 unanswerable were refused
_DIGIT = re.compile(r"\d")


def content_words(question: str) -> tuple[str, ...]:
    """The words of `question` a search matches on, lower-cased, in order (stopwords dropped)."""
    return tuple(terms(question))


def reading(question: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """The words a passage is matched and quoted on: `words` without "much" / "many", with NUMBER when the question
    asks for a figure and NOT when it is negated (`text.asks_for`, as the search reads it)."""
    asks = asks_for(question)
    read = tuple(word for word in words if word not in AMOUNT_WORDS)
    return (*read, *((NUMBER,) if asks.figure else ()), *((NOT,) if asks.negated else ()))


def needed(words: int) -> int:
    """How many of a question's content words a passage must hold to count as answering it: at least half, and at
    least two (all of them when the question has fewer)."""
    return min(words, max(2, -(-words // 2)))


@dataclass(frozen=True)
class Match:
    """How many of the question's content words a passage holds."""

    found: float  # a word held through a synonym only counts SYNONYM_CREDIT
    asked: int
    extra: int = 0  # how many of NUMBER and NOT it holds

    @property
    def rank(self) -> tuple[int, float]:
        """Better first when sorted descending: what the question asks for (a number, a "not"), then more of its
        words: a passage without a number cannot say how much."""
        return self.extra, self.found

    @property
    def strong(self) -> bool:
        return self.asked > 0 and self.found >= needed(self.asked)


def match(words: tuple[str, ...], chunk: Chunk) -> Match:
    """Count `words` found in the passage, its document line or its file name (variants and synonyms too)."""
    asked = tuple({stem(word): word for word in words}.values())
    readings = {NUMBER, NOT}
    text = f"{chunk.file} {chunk.context} {chunk.text}"
    held = held_words(asked, text)
    # NUMBER and NOT are weak evidence (most passages hold a digit): they add READING_CREDIT, never a word asked.
    found = _credit(asked, text, held - readings) + READING_CREDIT * len(held & readings)
    return Match(found=found, asked=len(set(asked) - readings), extra=len(held & readings))


def _credit(words: tuple[str, ...], text: str, held: set[str]) -> float:
    """1 for each word of `held` that `text` holds as such or as a variant, SYNONYM_CREDIT for one held through a
    synonym only."""
    direct = held_words(words, text, synonyms=False) & held
    return len(direct) + SYNONYM_CREDIT * len(held - direct)


def held_words(words: tuple[str, ...], text: str, *, synonyms: bool = True) -> set[str]:
    """The words of `words` that `text` holds: as such, as a variant, as a common synonym (unless `synonyms` is
    False); NUMBER when it holds a digit, NOT when a negation stands just before one of the other words."""
    stemmed = stem_text(text)
    held = set(stemmed.split())
    found = {word for word in words if word not in (NUMBER, NOT) and _holds(word, held, stemmed, synonyms)}
    if NUMBER in words and _DIGIT.search(text):
        found.add(NUMBER)
    if NOT in words and negates(stemmed, frozenset(stem(word) for word in words)):
        found.add(NOT)
    return found


def _holds(word: str, held: set[str], stemmed: str, synonyms: bool) -> bool:
    key = stem(word)
    if key in held or any(variant(key, other) for other in held):
        return True
    return synonyms and any(
        f" {entry} " in stemmed if " " in entry else entry in held for entry in _synonym_stems(word)
    )


@functools.lru_cache(maxsize=4096)
def _synonym_stems(word: str) -> tuple[str, ...]:
    return tuple(" ".join(stem(part) for part in entry.split()) for entry in alternatives(word))


def topic_words(words: tuple[str, ...], chunk: Chunk) -> tuple[str, ...]:
    """`words` without those naming the passage's document ("acme" in supplier_contract_acme.pdf): every sentence
    of the document is about it, so they should not pick the sentences to quote. All of `words` if none is left."""
    naming = set(stem_text(f"{chunk.file} {chunk.context}").split())
    return tuple(word for word in words if stem(word) not in naming) or words


def quote_window(text: str, words: tuple[str, ...], *, tabular: bool = False, limit: int = QUOTE_CHARS) -> str:
    """The sentences (table rows) of `text` holding most of `words`, widened with their neighbours up to `limit`
    characters; `…` marks what was left out. With no words, the start of the text."""
    units = split_units(text, tabular=tabular)
    if not units:
        return ""
    found = [held_words(words, unit) for unit in units]
    if not tabular and any(held and _is_sentence(unit) for held, unit in zip(found, units)):
        # Headings repeat the question's words without the fact ("1. Monthly plans and the refund window"):
        # the sentences below them are what to quote.
        found = [held if _is_sentence(unit) else set() for held, unit in zip(found, units)]
    start, end = _core(units, found, limit)
    if end - start == 1 and len(units[start]) > limit:  # one long sentence: a window of its words
        return _word_window(units[start], words, limit, before=start > 0, after=end < len(units))
    start, end = _widen(units, found, start, end, limit)
    quote = " ".join(units[start:end])
    return f"{ELLIPSIS} " * (start > 0) + quote + f" {ELLIPSIS}" * (end < len(units))


def split_units(text: str, *, tabular: bool = False) -> list[str]:
    """Sentences, headings and table rows: wrapped lines are joined, short lines (headings, rows) stand alone."""
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    if tabular:
        return lines
    longest = max((len(line) for line in lines), default=0)
    paragraphs: list[str] = []
    current = ""
    for line, following in zip(lines, [*lines[1:], ""]):
        current = f"{current} {line}".strip()
        # A PDF wraps long lines: a unit ends at a sentence end, or at a short line (a heading) before a capital.
        short = len(line) < min(0.6 * longest, HEADING_CHARS) and (following[:1].isupper() or following[:1].isdigit())
        if line.endswith((".", "!", "?", ":")) or short or not following:
            paragraphs.append(current)
            current = ""
    units: list[str] = []
    for paragraph in paragraphs:
        for sentence in _SENTENCE_END.split(paragraph):
            if units and _LIST_NUMBER.match(units[-1]):
                units[-1] = f"{units[-1]} {sentence}"
            elif sentence:
                units.append(sentence)
    return units


def _is_sentence(unit: str) -> bool:
    return unit.endswith((".", "!", "?", ";", ")")) or ": " in unit


def _core(units: list[str], found: list[set[str]], limit: int) -> tuple[int, int]:
    """The shortest run of units that fits `limit` and holds the most distinct words."""
    best = (0, 0)  # (distinct words, -length)
    span = (0, 1)
    for start in range(len(units)):
        held: set[str] = set()
        length = 0
        for end in range(start + 1, len(units) + 1):
            length += len(units[end - 1]) + 1
            if length > limit and end > start + 1:
                break
            held |= found[end - 1]
            score = (len(held), -length)
            if score > best:
                best, span = score, (start, end)
    return span


def _widen(units: list[str], found: list[set[str]], start: int, end: int, limit: int) -> tuple[int, int]:
    """Add neighbouring units that match too while the quote fits; a short quote also gets one plain neighbour
    (the following one first), so that a fact is not shown without the sentence around it."""
    length = sum(len(unit) + 1 for unit in units[start:end])
    while True:
        after = len(units[end]) + 1 if end < len(units) else None
        before = len(units[start - 1]) + 1 if start > 0 else None
        wanted = length < limit // 2
        fits_after = after is not None and length + after <= limit and (wanted or bool(found[end]))
        fits_before = before is not None and length + before <= limit and (wanted or bool(found[start - 1]))
        if fits_after and (not fits_before or len(found[end]) >= len(found[start - 1])):
            end, length = end + 1, length + after  # type: ignore[operator]
        elif fits_before:
            start, length = start - 1, length + before  # type: ignore[operator]
        else:
            return start, end


def _word_window(sentence: str, asked: tuple[str, ...], limit: int, *, before: bool, after: bool) -> str:
    """The `limit`-character stretch of one long sentence holding the most matched words, with those words as near
    its middle as the sentence allows; cut at word ends."""
    words = sentence.split(" ")
    hit = [bool(held_words(asked, word)) for word in words]
    best: tuple[int, float] = (-1, 0.0)
    span = (0, 1)
    for first in range(len(words)):
        length, last = 0, first
        while last < len(words) and length + len(words[last]) + 1 <= limit:
            length += len(words[last]) + 1
            last += 1
        inside = [index for index in range(first, last) if hit[index]]
        off_centre = abs((first + last - 1) / 2 - (inside[0] + inside[-1]) / 2) if inside else 0.0
        if last > first and (len(inside), -off_centre) > best:
            best, span = (len(inside), -off_centre), (first, last)
    first, last = span
    quote = " ".join(words[first:last])
    return f"{ELLIPSIS} " * (before or first > 0) + quote + f" {ELLIPSIS}" * (after or last < len(words))
