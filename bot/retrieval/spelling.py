"""Query words the index has never seen, matched to the closest word it has ("hearin" -> "hear", "Helth" -> "health").

The vocabulary is FTS5's own (porter-stemmed) term list. A correction is added to the query as one more
alternative; the original word stays, so a rare correct word is never lost.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable

from bot.retrieval.rerank import stem

CUTOFF = 0.8  # difflib similarity a correction needs; lower lets "servises" become "supervis"
MIN_LENGTH = 4  # short words are too often right and too easily "corrected" into another word


class Vocabulary:
    """The index's terms, bucketed by first letter for quick fuzzy lookup."""

    def __init__(self, terms: Iterable[str]) -> None:
        self.buckets: dict[str, list[str]] = defaultdict(list)
        for term in terms:
            if term and not term[0].isdigit():
                self.buckets[term[0]].append(term)

    def closest(self, word: str) -> str | None:
        """The most similar known term of about the same length, or None when nothing is close enough."""
        if len(word) < MIN_LENGTH or word[0].isdigit():
            return None
        target = stem(word)
        candidates = [t for t in self.buckets.get(word[0], ()) if abs(len(t) - len(target)) <= 2]
        found = difflib.get_close_matches(target, candidates, n=1, cutoff=CUTOFF)
        return found[0] if found else None
