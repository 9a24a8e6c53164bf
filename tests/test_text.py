"""The shared word functions: common synonyms of a question's words (bot.text.alternatives)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.text import GROUPS, VARIANT_ENDINGS, WORD, alternatives, stem, variant

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


@pytest.mark.parametrize(
    ("question", "offered"),
    [
        (
            "How much can I be reimbursed for glasses?",
            ("expense", "refund", "repay", "pay back", "claim back", "money back"),
        ),
        (
            "Is a preauthorization needed to see a physician?",
            ("approval", "authorization", "authorisation", "certification", "require", "required", "doctor"),
        ),
        ("Does the plan pay for braces?", ("cover", "coverage", "pays for", "paid for", "include")),
        (
            "What is not covered?",
            ("pay for", "pays for", "paid for", "include", "exclude", "exclusion", "exception", "limitation"),
        ),
    ],
)
def test_a_questions_synonyms_leave_out_every_form_of_what_it_already_asks(question: str, offered: tuple) -> None:
    assert alternatives(question) == offered


def _by_variant(text: str) -> tuple[str, ...]:
    """alternatives() as `variant` defines it, word by word: the reference the quick lookup must match."""
    keys = [stem(word) for word in WORD.findall(text.lower())]
    pairs = [f"{first} {second}" for first, second in zip(keys, keys[1:])]
    found: list[str] = []
    for key in [*keys, *pairs]:
        for group in GROUPS:
            for entry in group:
                entry_key = " ".join(stem(word) for word in entry.split())
                parts, words = key.split(), entry_key.split()
                if len(parts) != len(words) or not all(variant(a, b) for a, b in zip(parts, words)):
                    continue
                for other in group:
                    other_key = " ".join(stem(word) for word in other.split())
                    asked = other_key in pairs if " " in other_key else any(variant(other_key, k) for k in keys)
                    if not asked:
                        found.append(other)
                break
    return tuple(dict.fromkeys(found))


def test_synonyms_treat_every_variant_of_a_word_as_that_word() -> None:
    # Every entry with each ending added and taken off, and every question of the ground truth: a word one letter
    # short of a variant, or with an ending that is not one, must not count as asked.
    words = {stem(word) for group in GROUPS for entry in group for word in entry.split()}
    forms = {f"{word}{ending}" for word in words for ending in [*VARIANT_ENDINGS, "er", "x"]}
    forms |= {word[:cut] for word in words for cut in range(3, len(word))}
    texts = [f"the {form} here" for form in sorted(forms)]
    texts += [json.loads(line)["question"] for line in (CORPUS / "ground_truth.jsonl").read_text().splitlines() if line]
    texts += [re.sub(r"\s+", " ", " ".join(group)) for group in GROUPS]
    assert len(texts) > 1000
    for text in texts:
        assert alternatives(text) == _by_variant(text), text
