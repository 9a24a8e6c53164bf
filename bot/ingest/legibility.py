"""Whether OCR's text of a page reads as words or as garbage. Pure functions.

Tesseract writes something for every mark it sees: a page fed mirrored, blurred or in a script it has no data for
comes out as `"Jou SAep Ayiy} ae Suwa} JUaWAeYd`, which would be indexed and quoted as if it were the document.
OCRmyPDF reports no confidence, so the text itself is judged: the share of its letters that stand in word-shaped
tokens (one case pattern, a vowel in a Latin word, no stray symbols inside) and in plain numbers. Clean OCR of
printed text scores above 0.85; a sideways or mirrored scan scores below 0.5.
"""

from __future__ import annotations

import re
import unicodedata

LEGIBLE = 0.6  # below this share a page reads as garbage
MIN_CHARS = 40  # fewer characters of text prove nothing either way: a page with a stamp or a caption
_EDGES = "\"'“”‘’()[]{}<>.,;:!?*-–—…/|•·"
_NUMBER = re.compile(r"[$€£¥]?\d[\d.,:/%-]*[%€$]?")
_LATIN_VOWELS = frozenset("aeiouyàáâãäåæèéêëìíîïòóôõöøœùúûüýÿ")
_SINGLE_LETTERS = frozenset("aAiIoOyY&")  # words of one letter in the languages OCR is usually asked for


def legibility(text: str) -> float:
    """The share (0 to 1) of the text's non-space characters that sit in word-shaped tokens or numbers; 1.0 for a
    text too short to judge."""
    tokens = text.split()
    total = sum(len(token) for token in tokens)
    if total < MIN_CHARS:
        return 1.0
    good = sum(len(token) for token in tokens if _word_shaped(token))
    return good / total


def legible(text: str) -> bool:
    """Whether OCR's text of a page may be indexed as what the page says."""
    return legibility(text) >= LEGIBLE


def _word_shaped(token: str) -> bool:
    core = token.strip(_EDGES)
    if not core:
        return True  # punctuation alone: a dash or a bullet between words
    if _NUMBER.fullmatch(core):
        return True
    parts = re.split(r"[-'’]", core)  # well-being, don't
    return all(_word(part) for part in parts if part)


def _word(part: str) -> bool:
    if not all(unicodedata.category(char).startswith("L") for char in part):
        return False
    if len(part) == 1:
        return part in _SINGLE_LETTERS or not _latin(part)
    cased = part.islower() or part.isupper() or (part[0].isupper() and part[1:].islower())
    if not cased:
        return False
    return not _latin(part) or any(char in _LATIN_VOWELS for char in part.lower())


def _latin(part: str) -> bool:
    return all("LATIN" in unicodedata.name(char, "") for char in part)
