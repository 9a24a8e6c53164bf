"""Common synonyms: people ask with other words than documents use ("reimbursed" / "expense", "pay for" / "cover").

Groups of everyday words that mean the same in questions about policies, benefits, contracts and jobs; none is
about one corpus. A question word or a two-word phrase of the question ("pay back") brings the other members of its
group; search and quoting weigh them below the words asked. Words are compared as variants (`variant`: crude stems
sharing a long start, so "reimbursed" finds "reimburse" and "reimbursement").
"""

from __future__ import annotations

import functools
import re

from bot.retrieval.rerank import stem

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


_WORD = re.compile(r"[^\W_]+")


def alternatives(text: str) -> tuple[str, ...]:
    """The other members of every group that a word, or two adjacent words, of `text` belong to, in order;
    never one already asked (by stem)."""
    keys = [stem(word) for word in _WORD.findall(text.lower())]
    pairs = [f"{first} {second}" for first, second in zip(keys, keys[1:])]
    found: list[str] = []
    for key in [*keys, *pairs]:
        for number in _groups(key):
            found.extend(entry for entry in GROUPS[number] if not _asked(_key(entry), keys, pairs))
    return tuple(dict.fromkeys(found))


def _asked(entry: str, keys: list[str], pairs: list[str]) -> bool:
    if " " in entry:
        return entry in pairs
    return any(variant(entry, key) for key in keys)
