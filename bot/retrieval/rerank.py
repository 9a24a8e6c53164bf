"""Second-stage ordering of keyword hits, pure functions over (row, score) pairs.

BM25 cannot tell two long documents apart by their titles: words like "Northwind" or "Standard" appear on most of
their pages, so their inverse document frequency is near zero. A question that names its document ("... under the
Northwind Standard plan") still means that document, so hits whose document line (title + first heading) shares the
question's words get a proportional boost. Overlapping chunks of one page are near duplicates: only the best chunk of
a page is kept, so `top` results show `top` different places.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from bot.retrieval.fts import terms

Row = TypeVar("Row")
TITLE_BOOST = 2.0  # a hit whose document line holds every query word scores (1 + TITLE_BOOST) times its BM25

_SUFFIX = re.compile(r"(?:ies|es|s|ing|ed|ly)$")


def stem(word: str) -> str:
    """A crude stem, enough to match `benefits` with `benefit` and `covered` with `cover`."""
    word = word.lower()
    return _SUFFIX.sub("", word) if len(word) > 4 else word


def title_boost(query_terms: Sequence[str], context: str) -> float:
    """1 + TITLE_BOOST * the share of query words found in the document line."""
    if not query_terms:
        return 1.0
    line = {stem(word) for word in terms(context)}
    shared = sum(1 for word in query_terms if stem(word) in line)
    return 1.0 + TITLE_BOOST * shared / len(query_terms)


def rerank(
    query: str, hits: Sequence[tuple[Row, float]], *, context: Callable[[Row], str], page: Callable[[Row], object]
) -> list[tuple[Row, float]]:
    """Hits re-scored by title boost, best first, only the best chunk of each page."""
    query_terms = terms(query)
    scored = sorted(
        ((row, score * title_boost(query_terms, context(row))) for row, score in hits), key=lambda pair: -pair[1]
    )
    kept: list[tuple[Row, float]] = []
    seen: set[object] = set()
    for row, score in scored:
        if page(row) not in seen:
            seen.add(page(row))
            kept.append((row, score))
    return kept
