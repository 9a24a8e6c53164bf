"""Turns what a person typed into a safe SQLite FTS5 MATCH expression.

User text never reaches FTS5 syntax: it is split into word tokens, each token (and each phrase of adjacent words)
is quoted as an FTS5 string, and they are joined with OR, so quotes, operators (AND, NEAR, *, ^, :) and unicode are
all just words. BM25 then rewards chunks that contain more of the rarer words.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from bot.text import MAX_TERMS, STOPWORDS, WORD
from bot.text import terms as terms  # the word functions live in bot.text (the agent shares them)

_WORD = WORD  # letters and digits; "_" separates words, as in FTS5's unicode61
_COMPOUND = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)+")  # in-network, pre-authorization, O'Brien


def compounds(query: str) -> list[str]:
    """Hyphenated compounds as phrases: `out-of-network` -> `out of network` (one idea, several index tokens)."""
    found = [" ".join(token.lower() for token in _WORD.findall(compound)) for compound in _COMPOUND.findall(query)]
    return list(dict.fromkeys(found))[:MAX_TERMS]


def phrases(query: str) -> list[str]:
    """Word pairs worth matching as phrases: hyphenated compounds ("in network") and adjacent content words."""
    found: list[str] = []
    for compound in _COMPOUND.findall(query):
        found.append(" ".join(token.lower() for token in _WORD.findall(compound)))
    words = [token.lower() for token in _WORD.findall(query)]
    for first, second in zip(words, words[1:]):
        if first not in STOPWORDS and second not in STOPWORDS:
            found.append(f"{first} {second}")
    return list(dict.fromkeys(found))[:MAX_TERMS]


def match_expression(words: Sequence[str], phrases: Sequence[str] = ()) -> str | None:
    """`"w1" OR "w2" OR "w1 w2" ...` for FTS5 MATCH, or None when there is nothing to match.

    Each word and phrase is an FTS5 string, so nothing the user typed is read as syntax; phrases add the weight
    of words that stand together in the text.
    """
    alternatives = list(dict.fromkeys(item for item in [*words, *phrases] if item.strip()))
    if not alternatives:
        return None
    return " OR ".join('"' + item.replace('"', '""') + '"' for item in alternatives)


# --- the Scope inside the MATCH -----------------------------------------------------------------------------------
# Each chunk's hidden `scope` column holds one token for its container and one per tag. Filtering by AND-ing those
# tokens into the MATCH lets FTS5 intersect posting lists instead of joining every matched row to the chunks table
# (4 ms of 11 at 50,000 chunks). Tokens are a letter pair and decimal digits, so the porter stemmer leaves them alone.
SCOPE_COLUMN = "scope"
TEXT_COLUMNS = "{context text}"


def scope_token(kind: str, value: str) -> str:
    """`zc<digits>` for a container, `zt<digits>` for a `key:value` tag: stable, and no user word looks like it."""
    digest = int(hashlib.sha256(value.encode("utf-8")).hexdigest()[:16], 16)
    return f"z{kind}{digest:020d}"


def scope_tokens(container: str, tags: Sequence[str]) -> str:
    """The `scope` column of a chunk: its container token and its tag tokens."""
    return " ".join([scope_token("c", container), *(scope_token("t", tag) for tag in tags)])


def scoped_match(
    expression: str, containers: Sequence[str], tags_by_key: dict[str, tuple[str, ...]], *, whole_index: bool = False
) -> str:
    """`{context text} : (expression) AND (scope : "zc.." OR ...) AND (scope : "zt.." OR ...) ...`: any of the
    containers, and for tags the same key OR, keys AND. `whole_index`: the containers hold every passage of the index,
    so their clause is left out (it filters nothing, and bm25() would count every row for its idf: local_sql)."""
    if not containers:
        raise ValueError("a scoped search needs at least one container")
    places = [f'{SCOPE_COLUMN} : "{scope_token("c", container)}"' for container in containers]
    parts = [f"{TEXT_COLUMNS} : ({expression})", *([] if whole_index else ["(" + " OR ".join(places) + ")"])]
    for key, values in tags_by_key.items():
        tokens = [f'{SCOPE_COLUMN} : "{scope_token("t", f"{key}:{value}")}"' for value in values]
        parts.append("(" + " OR ".join(tokens) + ")")
    return " AND ".join(parts)
