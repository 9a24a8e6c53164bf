"""Follow-up questions without a model: what to search for when "and the termination notice?" follows a question
about Acme. Pure functions over the conversation's earlier questions.

A question that leans on the one before (it starts with "and", "what about", "for", "the", ...) is searched with
words carried over from the earlier search:
- the words that named the earlier answer's documents ("acme", found in supplier_contract_acme.pdf) when the
  follow-up changes the topic: "and the termination notice?" -> "acme termination notice";
- the earlier topic words when the follow-up names something new with a capital: after "payment terms acme",
  "what about Brightline?" -> "payment terms brightline".
Any other question starts afresh. The search shown to the person says what was carried.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.agent.quotes import content_words
from bot.text import stem, stem_text

_WORD = re.compile(r"[^\W_]+")
CONNECTORS = frozenset("and also but or plus then".split())
LEADS = (("what", "about"), ("how", "about"), ("same", "for"))
# Words that open a fragment ("the termination notice?", "for annual plans?", "in 2025?") rather than a question.
FRAGMENT_STARTS = frozenset(
    "the a an for in on with about under at during from to its their that this those these same".split()
)


@dataclass(frozen=True)
class Asked:
    """An earlier question of the conversation and the document names its answer cited (file names, titles)."""

    question: str
    documents: str = ""


def leans_on_earlier(question: str) -> bool:
    """Whether `question` reads as a continuation of the one before ("and the termination notice?")."""
    words = [word.lower() for word in _WORD.findall(question)]
    if not words:
        return False
    return words[0] in CONNECTORS or tuple(words[:2]) in LEADS or words[0] in FRAGMENT_STARTS


def search_words(question: str, earlier: Sequence[Asked]) -> tuple[str, ...]:
    """The words to search for `question`, after the conversation's `earlier` questions (oldest first)."""
    words: tuple[str, ...] = ()
    cited = ""
    for turn in [*earlier, Asked(question)]:
        own = content_words(turn.question)
        if words and leans_on_earlier(turn.question):
            own = (*_carried(words, cited, turn.question, own), *own)
        words, cited = own, turn.documents
    return words


def _carried(words: tuple[str, ...], cited: str, question: str, own: tuple[str, ...]) -> tuple[str, ...]:
    naming = set(stem_text(cited).split())
    subject = tuple(word for word in words if stem(word) in naming)
    topic = tuple(word for word in words if stem(word) not in naming)
    new_name = any(word[:1].isupper() for word in _WORD.findall(question)[1:])
    chosen = (topic if new_name else subject) or words  # nothing cited: carry the whole earlier search
    return tuple(word for word in chosen if word not in own)
