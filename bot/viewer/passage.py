"""Where a cited passage stands in a page's text, found by its words alone. Pure functions.

A page's text layer and the passage indexed from it differ in ways a reader does not see: line breaks, hyphens at
line ends ("manage-\\nment"), ligatures ("ﬁ"), spacing, case. Both are reduced to their letters and digits (NFKC,
case-folded), and the passage is found by its opening words and its closing words at the distance its length says.
Only one such place will do: a passage whose words are not there, or are there twice, is not located, because a
highlight on the wrong sentence is worse than none.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

ANCHOR_WORDS = 8  # the opening and closing words a link carries (a passage this short or shorter travels whole)
ANCHOR_CHARS = 80  # and never more characters than this each (a link of ten citations must fit a Slack message)
MIN_LETTERS = 12  # fewer letters than this could stand anywhere: never located
_SLACK = 0.1  # the span found may differ from the passage's length by this share (spacing, a dropped footer mark)


@dataclass(frozen=True)
class Anchors:
    """What a link carries of a passage: its opening words, its closing words ("" when the opening is all of it), and
    how many letters and digits the whole passage holds."""

    head: str
    tail: str
    size: int


@dataclass(frozen=True)
class Folded:
    """A text reduced to its letters and digits, and for each of them the index of the character it came from."""

    letters: str
    origin: tuple[int, ...]


@dataclass(frozen=True)
class Located:
    """The passage's place in the original text: characters `first` to `last` inclusive; `partial` when the page ends
    before the passage does (a sentence that runs on to the next page): then only its opening words, which are sure."""

    first: int
    last: int
    partial: bool = False


def fold(text: str) -> Folded:
    """`text`'s letters and digits, NFKC-normalised and case-folded, each mapped back to its character."""
    letters: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for part in unicodedata.normalize("NFKC", char).casefold():
            if part.isalnum():
                letters.append(part)
                origin.append(index)
    return Folded("".join(letters), tuple(origin))


def anchors_of(text: str) -> Anchors:
    """The anchors a link carries for the passage `text`."""
    words = text.split()
    size = len(fold(text).letters)
    if len(words) <= 2 * ANCHOR_WORDS and len(text) <= ANCHOR_CHARS:
        return Anchors(head=" ".join(words), tail="", size=size)
    head = " ".join(words[:ANCHOR_WORDS])[:ANCHOR_CHARS]
    tail = " ".join(words[-ANCHOR_WORDS:])[-ANCHOR_CHARS:]
    return Anchors(head=head, tail=tail, size=size)


def locate(anchors: Anchors, text: str) -> Located | None:
    """The one place in `text` where the passage stands, or None when it is not there or could stand in two places."""
    page = fold(text)
    head, tail = fold(anchors.head).letters, fold(anchors.tail).letters
    if len(head) < MIN_LETTERS or anchors.size < len(head):
        return None
    spans = {
        span
        for start in _occurrences(page.letters, head)
        if (span := _span(page.letters, start, head, tail, anchors.size)) is not None
    }
    whole = {span for span in spans if not span[2]}
    chosen = whole or spans or _opening_at_end(page.letters, head)  # found whole beats cut short by the page's end
    if len(chosen) != 1:
        return None
    start, end, partial = chosen.pop()
    first = _widened(text, page.origin[start], -1, _marks_at(anchors.head, reverse=False))
    last = _widened(
        text, page.origin[end - 1], 1, 0 if partial else _marks_at(anchors.tail or anchors.head, reverse=True)
    )
    return Located(first=first, last=last, partial=partial)


def _marks_at(text: str, *, reverse: bool) -> int:
    """How many punctuation marks `text` opens (or, `reverse`, closes) with, before its first letter or digit: a
    passage's closing full stop or a heading's `#` is part of it, though only letters and digits are matched."""
    count = 0
    for char in reversed(text.strip()) if reverse else text.strip():
        if char.isalnum():
            break
        count += 0 if char.isspace() else 1
    return count


def _widened(text: str, at: int, step: int, marks: int) -> int:
    """`at` moved over up to `marks` punctuation characters (and the spaces between them) in direction `step`,
    never onto a letter or a digit, and never past a line's end."""
    look = at
    while marks > 0:
        look += step
        if not 0 <= look < len(text) or text[look].isalnum() or text[look] in "\r\n":
            break
        if not text[look].isspace():
            at, marks = look, marks - 1
    return at


def _opening_at_end(letters: str, head: str) -> set[tuple[int, int, bool]]:
    """The passage's opening words cut by the page's end ("Generally, out-of-" | next page): the longest start of
    `head` the page ends with, if it holds at least MIN_LETTERS letters (a page cannot end twice)."""
    for size in range(len(head) - 1, MIN_LETTERS - 1, -1):
        if letters.endswith(head[:size]):
            return {(len(letters) - size, len(letters), True)}
    return set()


def _occurrences(letters: str, word: str) -> list[int]:
    found, at = [], letters.find(word)
    while at >= 0:
        found.append(at)
        at = letters.find(word, at + 1)
    return found


def _span(letters: str, start: int, head: str, tail: str, size: int) -> tuple[int, int, bool] | None:
    """(start, end, partial) of the passage that opens at `start`, or None when its close is not where its length
    says. A passage that runs past the page's end (its close nowhere on the page, too little page left for it) is
    taken as its opening words alone."""
    slack = max(10, int(size * _SLACK))
    if not tail:
        return (start, start + len(head), False) if abs(len(head) - size) <= slack else None
    ends = [at + len(tail) for at in _occurrences(letters, tail) if at >= start + len(head)]
    fitting = [end for end in ends if abs(end - start - size) <= slack]
    if len(fitting) == 1:
        return start, fitting[0], False
    if not ends and len(letters) - start < size - slack:
        # Runs on to the next page. Only its opening words are certain: what follows them here may be a footer.
        return start, start + len(head), True
    return None
