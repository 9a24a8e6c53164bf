"""Second-stage ordering of keyword hits, pure functions over (row, score) pairs; and rank fusion.

Mid-frequency words and phrases of the query are scored here, on the candidates only, with FTS5's BM25 formula
(see vocabulary.plan_query for why), counted in each chunk's `stem_text`, which the index stores at write time (the
stemming was most of the Python time of a search). Then: BM25 cannot tell two long documents apart by their titles, since words
like "Northwind" or "Standard" appear on most of their pages and so have an inverse document frequency near zero.
A question that names its document ("... under the Northwind Standard plan") still means that document, so hits
whose document line (title + first heading) shares the question's words get a proportional boost. Overlapping
chunks of one page are near duplicates: only the best chunk of a page is kept, so `top` results show `top` places.
Readings of the question weigh in that choice too (`text.asks_for`): "how much" / "how many" prefer a passage with a
number, "not covered" / "isn't included" one that says "not" before the question's word (the exclusions, not the
list of what is covered beside them on the same page), and "what is X?" one that says "X is ..." (its definition).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

import numpy as np

from bot.text import asks_for, defines, negates, stem, terms
from bot.text import stem_text as stem_text  # the word functions live in bot.text (the agent shares them)


class Candidate(Protocol):
    """A keyword hit as `rerank` reads it (the local index's ChunkRow)."""

    @property
    def context(self) -> str: ...  # the document line (title + first heading), and the section

    def stemmed_text(self) -> str: ...  # stem_text of the context and the text

    def place(self) -> object: ...  # where a citation points (a page, or a text file's chunk): one hit per place


Row = TypeVar("Row", bound=Candidate)
TITLE_BOOST = 2.0  # a hit whose document line holds every query word scores (1 + TITLE_BOOST) times its BM25
READING_BOOST = 0.3  # a hit giving what the question asks for (a number, a "not") scores 1.3x (0.0-0.6: same hit@k)
# "What is X?" prefers a passage saying "X is ..." / "X means ...": 1.6x (ground truth hit@5 0.86 -> 0.88, hit@3 0.74;
# 0.3 and 0.45 gave 0.86, 1.0 the same as 0.6; no paraphrase asks so).
DEFINITION_BOOST = 0.6
_DIGIT = re.compile(r"\d")


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


def reading_boost(query: str, query_terms: Sequence[str], texts: Sequence[str]) -> np.ndarray:
    """1 + READING_BOOST for each text (stem_text) that gives what the question asks for, else 1."""
    asks = asks_for(query)
    boost = np.ones(len(texts))
    if not (asks.amount or asks.negated or asks.definition):
        return boost
    keys = frozenset(stem(word) for word in query_terms)
    for index, text in enumerate(texts):
        if (asks.amount and _DIGIT.search(text)) or (asks.negated and negates(text, keys)):
            boost[index] += READING_BOOST
        if asks.definition and defines(text, keys):
            boost[index] += DEFINITION_BOOST
    return boost


BM25_K1 = 1.2  # FTS5's constants, so late scores add up with bm25() on one scale
BM25_B = 0.75
PHRASE_IDF = 2.0  # two adjacent query words found side by side: worth about a mid-frequency word (tuned, 1-4 all close)


def late_scores(
    later: Sequence[tuple[str, float]], phrases: Sequence[str], stemmed: Sequence[str], average_tokens: float
) -> np.ndarray:
    """BM25 of words (word, idf) and phrases on each candidate's `stem_text`, on the scale of FTS5's bm25().

    Counting is `str.count` of " a b " in the stemmed text (once per occurrence), the formula is vectorised.
    """
    if not stemmed or (not later and not phrases):
        return np.zeros(len(stemmed))
    weighted = [(f" {stem(word)} ", idf) for word, idf in later]
    weighted += [(f" {' '.join(stem(word) for word in phrase.split())} ", PHRASE_IDF) for phrase in phrases]
    counts = np.array([[text.count(sequence) for sequence, _ in weighted] for text in stemmed], dtype=np.float64)
    lengths = np.array([text.count(" ") - 1 for text in stemmed], dtype=np.float64)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / max(average_tokens, 1.0))
    idf = np.array([value for _, value in weighted])
    return (counts * (BM25_K1 + 1) / (counts + norm[:, None])) @ idf


def rerank(
    query: str,
    hits: Sequence[tuple[Row, float]],
    *,
    later: Sequence[tuple[str, float]] = (),
    phrases: Sequence[str] = (),
    average_tokens: float = 100.0,
) -> list[tuple[Row, float]]:
    """Hits re-scored (late words on each row's `stemmed_text()`, then title boost), best first, only the best chunk
    of each place (`place()`: a page, or a text file's chunk)."""
    if not hits:
        return []
    query_terms = terms(query)
    scores = np.array([score for _, score in hits], dtype=np.float64)
    texts = [row.stemmed_text() for row, _ in hits]
    scores += late_scores(later, phrases, texts, average_tokens)
    scores *= np.array([title_boost(query_terms, row.context) for row, _ in hits])
    scores *= reading_boost(query, query_terms, texts)
    kept: list[tuple[Row, float]] = []
    seen: set[object] = set()
    for index in np.argsort(-scores, kind="stable"):
        row = hits[index][0]
        if row.place() not in seen:
            seen.add(row.place())
            kept.append((row, float(scores[index])))
    return kept


RRF_K = 60  # the usual reciprocal-rank-fusion constant: later ranks still count, but the top few dominate


def fuse_rankings(*rankings: Sequence[int], weights: Sequence[float] | None = None) -> dict[int, float]:
    """Reciprocal rank fusion: id -> sum of weight / (RRF_K + rank), ordered best first (weights default to 1)."""
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings)):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (RRF_K + rank)
    return dict(sorted(scores.items(), key=lambda pair: -pair[1]))


def spread(scores: dict[int, float]) -> dict[int, float]:
    """Scores placed within their own range (lowest 0, best 1). Cosine similarities of most embedding models sit in
    a narrow band (0.7-0.9 for e5), so a share of the top score cuts nothing; a share of the candidates' range does."""
    if not scores:
        return {}
    low, best = min(scores.values()), max(scores.values())
    if best <= low:
        return {item: 1.0 for item in scores}
    return {item: (score - low) / (best - low) for item, score in scores.items()}


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
