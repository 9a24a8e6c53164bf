"""Word functions several layers share (the keyword search, the quoted passages, the follow-up rewriting): which
words of a text are worth matching, and their crude stems. Imports nothing of ours.
"""

from __future__ import annotations

import functools
import re

WORD = re.compile(r"[^\W_]+")  # letters and digits; "_" separates words, as in FTS5's unicode61
MAX_TERMS = 32
_SUFFIX = re.compile(r"(?:ies|es|s|ing|ed|ly)$")

# Function words that match almost every chunk: OR-ing them in only adds noise and time.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below between both but
    by can could did do does doing down during each few for from further had has have having he her here hers herself
    him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves s t d ll m re ve y
    tell explain describe give list show find please does mean means
    according accordance mentioned mention happens happen specific document documents pdf regarding
    """.split()
)


def terms(query: str) -> list[str]:
    """The distinct lower-cased word tokens of `query` worth searching for, in order (stopwords dropped)."""
    tokens = [token.lower() for token in WORD.findall(query)]
    kept = [token for token in tokens if token not in STOPWORDS]
    # A query made only of stopwords ("what is it?") still searches for its words rather than for nothing.
    chosen = kept or tokens
    return list(dict.fromkeys(chosen))[:MAX_TERMS]


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem, enough to match `benefits` with `benefit` and `covered` with `cover`."""
    word = word.lower()
    return _SUFFIX.sub("", word) if len(word) > 4 else word


def stem_text(text: str) -> str:
    """` stem stem ... `: every word of `text` stemmed, space separated and padded; the index stores it per chunk."""
    return f" {' '.join(stem(word) for word in WORD.findall(text.lower()))} "
