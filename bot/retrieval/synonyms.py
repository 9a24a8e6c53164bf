"""Common synonyms: people ask with other words than documents use ("reimbursed" / "expense", "pay for" / "cover").

Groups of everyday words that mean the same in questions about policies, benefits, contracts and jobs; none is
about one corpus. A question word (crudely stemmed, so "reimbursed" finds "reimburse") or a two-word phrase of the
question ("pay back") brings the other members of its group; search and quoting weigh them below the words asked.
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
    ("insurance", "insurer", "plan"),
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


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, tuple[int, ...]]:
    """stemmed entry ("pay back" -> "pay back") -> the groups it belongs to."""
    found: dict[str, list[int]] = {}
    for number, group in enumerate(GROUPS):
        for entry in group:
            found.setdefault(_key(entry), []).append(number)
    return {key: tuple(numbers) for key, numbers in found.items()}


def _key(entry: str) -> str:
    return " ".join(stem(word) for word in entry.lower().split())


_WORD = re.compile(r"[^\W_]+")


def alternatives(text: str) -> tuple[str, ...]:
    """The other members of every group that a word, or two adjacent words, of `text` belong to, in order;
    never one already asked (by stem)."""
    keys = [stem(word) for word in _WORD.findall(text.lower())]
    asked = set(keys) | {f"{first} {second}" for first, second in zip(keys, keys[1:])}
    found: list[str] = []
    for key in [*keys, *(f"{first} {second}" for first, second in zip(keys, keys[1:]))]:
        for number in _index().get(key, ()):
            found.extend(entry for entry in GROUPS[number] if _key(entry) not in asked)
    return tuple(dict.fromkeys(found))
