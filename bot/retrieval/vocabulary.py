"""What the index knows about words, used to plan a keyword query. Pure functions and a value type.

Two problems it solves:
- Misspellings ("hearin", "Helth"): a word the index has never seen gets its closest known term added as an
  alternative (the original stays, so a rare correct word is never lost).
- Speed: FTS5 computes bm25() for every row a MATCH finds, so a query OR-ing words found in a quarter of the
  chunks scores most of the index (~110 ms at 50,000 chunks). Only rare words (in <= 5% of chunks) and unknown
  words select candidates; mid-frequency words and phrases score just those candidates (`rerank.late_scores`, same
  BM25 formula); words in most chunks ("northwind" in a corpus about Northwind plans, idf near zero) are ignored,
  though they still count in `rerank.title_boost`. Together with the scope tokens (fts.scoped_match) this brought
  p50 to ~9 ms at 50,000 chunks, at the cost of about 0.02-0.04 hit@5 on the shared corpus. A query of common
  words only selects with its rarest ones while their shares fit SELECT_BUDGET (p99 53 -> 25 ms, same hit@k).
"""

from __future__ import annotations

import difflib
import math
from collections import defaultdict
from dataclasses import dataclass

from bot.retrieval.fts import compounds, phrases, terms
from bot.retrieval.rerank import stem
from bot.text import alternatives

RARE_SHARE = 0.05  # terms in at most this share of chunks select the candidates (FTS5 MATCH + bm25)
COMMON_SHARE = 0.25  # terms in more than this share have BM25 idf <= ~1 (vs ~7 for rare terms): ignored
RAREST_KEPT = 3  # with no rare word, at most this many of the rarest words select
SELECT_BUDGET = 0.4  # ... while their shares add up to at most this (the rarest one always selects)
SYNONYM_WEIGHT = 0.5  # a synonym scores half its BM25 weight (0.3-1.0 all close; paraphrase hit@3 0.54 -> 0.67)
CUTOFF = 0.8  # difflib similarity a correction needs; lower lets "servises" become "supervis"
MIN_LENGTH = 4  # shorter words are too often right, and too easily "corrected" into another word


@dataclass(frozen=True)
class QueryPlan:
    """The words and phrases one keyword search matches."""

    words: tuple[str, ...]  # words and compound phrases matched by FTS5 and scored by its bm25(): they select
    phrases: tuple[str, ...]  # scored on the candidates only (rerank.late_scores)
    later: tuple[tuple[str, float], ...] = ()  # (word, idf) scored on the candidates only
    wider: tuple[str, ...] = ()  # common words that also select when `words` alone find too few candidates


class Vocabulary:
    """The index's (porter-stemmed) terms with the number of chunks holding each."""

    def __init__(self, doc_freq: dict[str, int], total: int, *, average_tokens: float = 100.0) -> None:
        self.doc_freq = doc_freq
        self.total = max(total, 1)
        self.average_tokens = average_tokens
        self.buckets: dict[str, list[str]] = defaultdict(list)
        for term in doc_freq:
            if term and not term[0].isdigit():
                self.buckets[term[0]].append(term)

    def share(self, term: str) -> float:
        """The share of chunks that hold `term` (0 when unknown)."""
        return self.doc_freq.get(term, 0) / self.total

    def idf(self, term: str) -> float:
        """FTS5's BM25 inverse document frequency of `term` (never below 1e-6, as in FTS5)."""
        found = self.doc_freq.get(term, 0)
        return max(math.log((self.total - found + 0.5) / (found + 0.5)), 1e-6)

    def closest(self, word: str) -> str | None:
        """The most similar known term of about the same length, or None when nothing is close enough."""
        if len(word) < MIN_LENGTH or word[0].isdigit():
            return None
        target = stem(word)
        candidates = [t for t in self.buckets.get(word[0], ()) if abs(len(t) - len(target)) <= 2]
        found = difflib.get_close_matches(target, candidates, n=1, cutoff=CUTOFF)
        return found[0] if found else None


def plan_query(query: str, stems: dict[str, str], vocabulary: Vocabulary | None) -> QueryPlan:
    """Rare words select candidates (FTS5); other useful words and all phrases score only the candidates.

    `stems` maps each word of `terms(query)` to the term the index's own tokenizer makes of it. An unknown word
    stays in the MATCH (it costs nothing) and its closest known term joins the other words; words in most chunks
    are ignored.
    """
    words = terms(query)
    if vocabulary is None or not words:
        return QueryPlan(tuple(words), tuple(phrases(query)))
    term = {word: stems.get(word, word) for word in words}
    unknown = [word for word in words if term[word] not in vocabulary.doc_freq]
    for word in unknown:
        correction = vocabulary.closest(word)
        if correction:
            term.setdefault(correction, correction)  # a vocabulary term is already stemmed
        for synonym in _stand_ins(word, stems, vocabulary):
            term.setdefault(synonym, stems[synonym])
    share = {word: vocabulary.share(stem) for word, stem in term.items() if word not in unknown}
    selecting = [word for word, found in share.items() if found <= RARE_SHARE]
    wider: list[str] = []
    if not selecting and share:
        selecting, wider = _rarest(list(share), share)
    scoring = [word for word, found in share.items() if word not in selecting and found <= COMMON_SHARE]
    later = tuple((word, vocabulary.idf(term[word])) for word in scoring) + _synonyms(query, stems, vocabulary, term)
    # A hyphenated compound ("out-of-network") is one idea spread over common tokens: as an FTS5 phrase it selects
    # the passages that say it, with its own BM25 weight (0.70 -> 0.72 hit@5, 0.78 -> 0.84 hit@10 on the shared
    # corpus; making every adjacent word pair a selecting phrase instead lost 0.04 hit@5).
    joined = compounds(query)
    late = tuple(phrase for phrase in phrases(query) if phrase not in joined)
    return QueryPlan(tuple(dict.fromkeys([*unknown, *selecting, *joined])), late, later, tuple(wider))


def synonym_words(query: str) -> list[str]:
    """The one-word synonyms of the question's words (their index terms are looked up with the question's)."""
    return [entry for entry in alternatives(query) if " " not in entry]


def _stand_ins(word: str, stems: dict[str, str], vocabulary: Vocabulary) -> list[str]:
    """The one-word synonyms of a word the index never uses that it does use: they stand in for the word, as if
    asked ("wrong" -> "false", "misleading"), where a synonym of a word the index holds only scores late."""
    return [entry for entry in alternatives(word) if " " not in entry and stems.get(entry) in vocabulary.doc_freq]


def _synonyms(
    query: str, stems: dict[str, str], vocabulary: Vocabulary, asked: dict[str, str]
) -> tuple[tuple[str, float], ...]:
    """(synonym, SYNONYM_WEIGHT * idf) for the synonyms the index holds and that are not common (scored late).

    One per crude stem, not per index term: the late scores count crude stems (rerank.late_scores), and porter's one
    term "requir" is two of them, "require" and "requir" (required, requires), so a group lists both forms."""
    held = set(asked.values())
    counted: set[str] = set()
    found = []
    for word in synonym_words(query):
        term, crude = stems.get(word, word), stem(word)
        if term not in held and crude not in counted and 0 < vocabulary.share(term) <= COMMON_SHARE:
            counted.add(crude)
            found.append((word, SYNONYM_WEIGHT * vocabulary.idf(term)))
    return tuple(found)


def _rarest(words: list[str], share: dict[str, float]) -> tuple[list[str], list[str]]:
    """With no rare word: the rarest words that fit SELECT_BUDGET select, the next ones up to RAREST_KEPT wait.

    bm25() costs time per row matched, and words in half the index match half of it (~50 ms at 50,000 chunks).
    Shares are counted over the whole index, though, so a word common overall may be the only one a small
    container holds: the waiting words join when the selecting ones find too few candidates (local_sql).
    """
    ordered = sorted(words, key=lambda word: share[word])[:RAREST_KEPT]
    selecting, used = [ordered[0]], share[ordered[0]]
    for word in ordered[1:]:
        if used + share[word] > SELECT_BUDGET:
            break
        selecting.append(word)
        used += share[word]
    return selecting, ordered[len(selecting) :]
