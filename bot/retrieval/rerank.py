"""Second-stage ordering of keyword hits, pure functions over (row, score) pairs; and rank fusion.

Mid-frequency words and phrases of the query are scored here, on the candidates only, with FTS5's BM25 formula
(see vocabulary.plan_query for why). Then: BM25 cannot tell two long documents apart by their titles, since words
like "Northwind" or "Standard" appear on most of their pages and so have an inverse document frequency near zero.
A question that names its document ("... under the Northwind Standard plan") still means that document, so hits
whose document line (title + first heading) shares the question's words get a proportional boost. Overlapping
chunks of one page are near duplicates: only the best chunk of a page is kept, so `top` results show `top` places.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from bot.retrieval.fts import terms

Row = TypeVar("Row")
TITLE_BOOST = 2.0  # a hit whose document line holds every query word scores (1 + TITLE_BOOST) times its BM25

_TOKEN = re.compile(r"[^\W_]+")
_SUFFIX = re.compile(r"(?:ies|es|s|ing|ed|ly)$")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem, enough to match `benefits` with `benefit` and `covered` with `cover`."""
    word = word.lower()
    return _SUFFIX.sub("", word) if len(word) > 4 else word


@functools.lru_cache(maxsize=4096)
def _line_stems(context: str) -> frozenset[str]:
    return frozenset(stem(word) for word in terms(context))


def title_boost(query_terms: Sequence[str], context: str) -> float:
    """1 + TITLE_BOOST * the share of query words found in the document line."""
    if not query_terms:
        return 1.0
    line = _line_stems(context)
    shared = sum(1 for word in query_terms if stem(word) in line)
    return 1.0 + TITLE_BOOST * shared / len(query_terms)


BM25_K1 = 1.2  # FTS5's constants, so late scores add up with bm25() on one scale
BM25_B = 0.75
PHRASE_IDF = 2.0  # two adjacent query words found side by side: worth about a mid-frequency word (tuned, 1-4 all close)


def late_score(
    later: Sequence[tuple[str, float]], phrases: Sequence[str], text: str, average_tokens: float
) -> float:
    """BM25 of words (word, idf) and phrases on one candidate's text, on the scale of FTS5's bm25()."""
    if not later and not phrases:
        return 0.0
    tokens = [stem(word) for word in _TOKEN.findall(text.lower())]
    norm = BM25_K1 * (1 - BM25_B + BM25_B * len(tokens) / max(average_tokens, 1.0))
    joined = f" {' '.join(tokens)} "  # phrase counting by substring: " a b " occurs once per adjacent pair
    weighted = [(stem(word), idf) for word, idf in later]
    weighted += [(" ".join(stem(word) for word in phrase.split()), PHRASE_IDF) for phrase in phrases]
    total = 0.0
    for sequence, idf in weighted:
        count = joined.count(f" {sequence} ")
        if count:
            total += idf * count * (BM25_K1 + 1) / (count + norm)
    return total


def rerank(
    query: str,
    hits: Sequence[tuple[Row, float]],
    *,
    context: Callable[[Row], str],
    page: Callable[[Row], object],
    text: Callable[[Row], str] | None = None,
    later: Sequence[tuple[str, float]] = (),
    phrases: Sequence[str] = (),
    average_tokens: float = 100.0,
) -> list[tuple[Row, float]]:
    """Hits re-scored (late words, then title boost), best first, only the best chunk of each page."""
    query_terms = terms(query)

    def score_of(row: Row, score: float) -> float:
        if text is not None:
            score += late_score(later, phrases, f"{context(row)} {text(row)}", average_tokens)
        return score * title_boost(query_terms, context(row))

    scored = sorted(((row, score_of(row, score)) for row, score in hits), key=lambda pair: -pair[1])
    kept: list[tuple[Row, float]] = []
    seen: set[object] = set()
    for row, score in scored:
        if page(row) not in seen:
            seen.add(page(row))
            kept.append((row, score))
    return kept


RRF_K = 60  # the usual reciprocal-rank-fusion constant: later ranks still count, but the top few dominate


def fuse_rankings(*rankings: Sequence[int]) -> dict[int, float]:
    """Reciprocal rank fusion: id -> sum of 1 / (RRF_K + rank), ordered best first."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (RRF_K + rank)
    return dict(sorted(scores.items(), key=lambda pair: -pair[1]))


def relative_strength(*scored: dict[int, float]) -> dict[int, float]:
    """id -> its best score relative to the top score of the same ranking (0..1): the score gap compares this."""
    strength: dict[int, float] = {}
    for scores in scored:
        best = max(scores.values(), default=0.0)
        if best <= 0:
            continue
        for item, score in scores.items():
            strength[item] = max(strength.get(item, 0.0), max(score, 0.0) / best)
    return strength
