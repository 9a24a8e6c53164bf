"""Word functions several layers share (the keyword search, the quoted passages, the follow-up rewriting): which
words of a text are worth matching, their crude stems, what a question asks for beyond its words (`asks_for`,
`negates`) and common synonyms (`alternatives`, `variant`). Imports nothing of ours.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

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
    tell explain describe give list show find please does mean means say says said thing things
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


# --- what a question asks for beyond its words (the search and the quotes read it alike) ---------------------------
NEGATION_REACH = 3  # "not covered", "does not cover", "is not be covered": the negation stands this close before
_HOW_MUCH = re.compile(r"\bhow\s+(?:much|many)\b", re.IGNORECASE)
# Nouns that ask for a figure too ("the deductible amounts", "what is the copay"): quotes want the number; the
# search does not weigh them (ground truth hit@5 0.80 -> 0.76: such passages are not rarer in numbers).
_FIGURE = re.compile(
    r"\b(?:amounts?|costs?|prices?|fees?|limits?|maximum|deductibles?|copay(?:ment)?s?|rates?|percentage)\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:not|no|never|without|cannot)\b|n[’']t\b", re.IGNORECASE)
# "What is X?", "what does X mean?", "define X": the question asks what X is; not "what is the copay" (a value),
# "what is not covered" or "what is required" (what the documents say of something else).
_DEFINITION = re.compile(
    r"^\W*(?:what\s+(?:is|are)\b(?!\s+(?:the|a|an|not|no|there|it|this|that)\b|\s+\w+ed\b)"
    r"|what\s+does\b.*\bmean\b|define\b)",
    re.IGNORECASE,
)
_DEFINING = frozenset({"is", "are", "mean", "refer"})  # stems: "X is", "X means", "X refers to"
_NEGATIONS = frozenset({"not", "no", "never", "without", "cannot", "t"})  # "doesn't" is "doesn" "t" once split


class Asks(NamedTuple):
    """What a question asks for beyond its words."""

    amount: bool  # "how much", "how many"
    figure: bool  # amount, or a noun that asks for a figure ("the copay")
    negated: bool  # "not", "no", "without", "n't"
    definition: bool = False  # "what is X?", "what does X mean?"


def asks_for(query: str) -> Asks:
    """What `query` asks for beyond its words (see Asks)."""
    amount = bool(_HOW_MUCH.search(query))
    figure = amount or bool(_FIGURE.search(query))
    return Asks(amount, figure, bool(_NEGATED.search(query)), bool(_DEFINITION.search(query)))


def negates(stemmed: str, keys: frozenset[str]) -> bool:
    """Whether a negation stands at most NEGATION_REACH words before one of `keys` in `stemmed` (a stem_text)."""
    tokens = stemmed.split()
    return any(
        token in _NEGATIONS and any(other in keys for other in tokens[at + 1 : at + 1 + NEGATION_REACH])
        for at, token in enumerate(tokens)
    )


def defines(stemmed: str, keys: frozenset[str]) -> bool:
    """Whether one of `keys` stands right before "is", "are", "means" or "refers" in `stemmed` (a stem_text): the
    passage says what it is."""
    tokens = stemmed.split()
    return any(token in keys and following in _DEFINING for token, following in zip(tokens, tokens[1:]))


# --- common synonyms ----------------------------------------------------------------------------------------------
# People ask with other words than documents use ("reimbursed" / "expense", "pay for" / "cover"): groups of everyday
# words that mean the same in questions about policies, benefits, contracts and jobs; none is about one corpus. A
# question word or a two-word phrase of the question ("pay back") brings the other members of its group; search and
# quoting weigh them below the words asked. Words are compared as variants (`variant`: crude stems sharing a long
# start, so "reimbursed" finds "reimburse" and "reimbursement").
GROUPS: tuple[tuple[str, ...], ...] = (
    ("reimburse", "reimbursement", "expense", "refund", "repay", "pay back", "claim back", "money back"),
    ("cover", "coverage", "pay for", "pays for", "paid for", "include"),
    ("exclude", "exclusion", "not covered", "exception", "limitation"),
    ("cost", "price", "fee", "charge"),
    ("complain", "complaint", "grievance"),
    ("appeal", "challenge", "dispute"),
    ("approval", "authorization", "authorisation", "preauthorization", "certification"),
    ("doctor", "physician"),
    ("medicine", "medication", "drug"),
    ("drugstore", "pharmacy"),
    ("job", "role", "position"),
    ("answer to", "report to", "reports to"),
    ("boss", "manager", "supervisor"),
    ("vacation", "time off", "leave", "pto"),
    ("salary", "wage", "compensation"),
    ("stop", "quit", "cessation"),
    ("car", "vehicle", "transportation", "ride"),
    ("kid", "child", "children", "dependent"),
    ("spouse", "partner"),
    ("fire", "dismiss", "terminate", "termination"),
    ("cancel", "cancellation"),
    ("sick", "illness"),
    ("eye", "vision"),
    ("teeth", "tooth", "dental"),
    ("shot", "vaccination", "vaccine", "immunization"),
    ("pregnancy", "maternity", "prenatal"),
    ("online", "virtual", "telehealth", "telemedicine"),
    ("rule", "policy"),
    ("wrong", "false", "misleading", "inaccurate"),
    ("need", "require", "required"),  # "what do I need" / "a referral is required" (ground truth hit@10 0.86 -> 0.88)
)


VARIANT_MIN = 5  # "reimburs" / "reimbursement" share a start this long; "care" / "career" do not count
# What may follow the shorter crude stem in the longer: inflections and the common noun endings
# ("reimburs" + "ement", "cover" + "age"), not "-er" ("office" / "officer" are two things).
VARIANT_ENDINGS = frozenset("e s es d ed ing ment ement ments ion ions ation age al ance ence ive able ible".split())


def variant(one: str, other: str) -> bool:
    """Whether two crude stems are forms of one word: equal, or the shorter (>= VARIANT_MIN letters) starts the
    longer and what follows is a VARIANT_ENDINGS ending."""
    if one == other:
        return True
    short, long = (one, other) if len(one) <= len(other) else (other, one)
    return len(short) >= VARIANT_MIN and long.startswith(short) and long[len(short) :] in VARIANT_ENDINGS


@functools.lru_cache(maxsize=1)
def _entries() -> tuple[tuple[str, int], ...]:
    """(stemmed entry, its group) for every entry: "pay back" -> ("pay back", 0)."""
    return tuple((_key(entry), number) for number, group in enumerate(GROUPS) for entry in group)


def _key(entry: str) -> str:
    return " ".join(stem(word) for word in entry.lower().split())


@functools.lru_cache(maxsize=8192)
def _groups(key: str) -> tuple[int, ...]:
    """The groups an entry of which is `key` or a variant of it (phrases compare word by word)."""
    parts = key.split()
    found = []
    for entry, number in _entries():
        words = entry.split()
        if len(words) == len(parts) and all(variant(a, b) for a, b in zip(parts, words)):
            found.append(number)
    return tuple(dict.fromkeys(found))


def alternatives(text: str) -> tuple[str, ...]:
    """The other members of every group that a word, or two adjacent words, of `text` belong to, in order;
    never one already asked (by stem)."""
    keys = [stem(word) for word in WORD.findall(text.lower())]
    pairs = [f"{first} {second}" for first, second in zip(keys, keys[1:])]
    found: list[str] = []
    for key in [*keys, *pairs]:
        for number in _groups(key):
            found.extend(
                entry for entry, forms in _members(number) if forms.isdisjoint(pairs if " " in entry else keys)
            )
    return tuple(dict.fromkeys(found))


@functools.lru_cache(maxsize=len(GROUPS))
def _members(number: int) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each entry of a group with the stems that ask for it: its own (a phrase: that pair exactly), or, for a word,
    every stem `variant` of it (a set lookup per question word instead of a `variant` call per word and entry)."""
    return tuple((entry, _forms(_key(entry))) for entry in GROUPS[number])


def _forms(key: str) -> frozenset[str]:
    """Every stem `variant(key, stem)` holds for: the key itself, and, where the shorter has VARIANT_MIN letters,
    the key plus an ending and the key less an ending."""
    if " " in key:
        return frozenset({key})
    longer = {key + ending for ending in VARIANT_ENDINGS} if len(key) >= VARIANT_MIN else set()
    shorter = {key[:cut] for cut in range(VARIANT_MIN, len(key)) if key[cut:] in VARIANT_ENDINGS}
    return frozenset({key, *longer, *shorter})
