"""Answers without a model: the passages that hold most of the question's words, each quoted around those words
with its citation and its document's date. Below the match threshold (`quotes.Match.strong`) the answer says the
documents do not answer, and quotes at most the closest passage, labelled as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot import messages
from bot.agent.followup import Asked, search_words
from bot.agent.options import AgentOptions
from bot.agent.quotes import content_words, match, quote_window, reading, topic_words
from bot.agent.sources import TurnSources
from bot.citations import render
from bot.models import Answer, Chunk, Conversation, Profile

if TYPE_CHECKING:
    from bot.retrieval import Retriever

QUOTES = 3  # passages quoted in a search-only answer


async def search_only(
    question: str,
    conversation: Conversation,
    *,
    retriever: Retriever,
    options: AgentOptions,
    notice: str,
    profile: Profile,
) -> Answer:
    """Search the question (with words carried from the one before when it is a follow-up) and quote the passages
    that answer it (SearchUnavailable propagates to the caller).

    Its own dedupe and budget: passages the model saw before it failed are still worth quoting.
    """
    words = search_words(question, earlier_questions(conversation))
    # A question of its own is searched as asked: the search reads "how much" and "not covered" from it.
    query = question if words == content_words(question) else " ".join(words) or question
    chunks = await retriever.search(query, conversation.scope, top=options.search_top)
    notices = (notice,) if words == content_words(question) else (notice, messages.searching_with_context(query))
    read = reading(question, words)
    picked, answers = pick(chunks, read)
    admitted = TurnSources(conversation, budget=options.chunk_budget).admit(picked)
    return quoted_answer(admitted.shown, options=options, notices=notices, profile=profile, words=read, answers=answers)


def earlier_questions(conversation: Conversation) -> list[Asked]:
    """The conversation's questions, each with the names of the documents its answer cited."""
    contexts: dict[str, set[str]] = {}
    for chunk in conversation.sources.values():
        contexts.setdefault(chunk.file, set()).add(chunk.context)
    return [
        Asked(turn.question, " ".join(f"{c.file} {' '.join(contexts.get(c.file, ()))}" for c in turn.citations))
        for turn in conversation.turns
    ]


def pick(chunks: Sequence[Chunk], words: tuple[str, ...]) -> tuple[list[Chunk], bool]:
    """The passages to quote and whether they answer: up to QUOTES strong matches, else the closest one alone."""
    found = [match(words, chunk) for chunk in chunks]
    # Passages giving what the question asks for (a number, a "not") first, then those holding more of its words;
    # the search's order breaks ties.
    ranked = sorted(range(len(chunks)), key=lambda index: tuple(-value for value in found[index].rank))
    strong = [chunks[index] for index in ranked if found[index].strong][:QUOTES]
    if strong or not chunks:
        return strong, bool(strong)
    closest = max(chunks[:QUOTES], key=lambda chunk: match(words, chunk).found)  # ties keep the search's order
    return [closest], False


def quoted_answer(
    shown: Sequence[tuple[str, Chunk]],
    *,
    options: AgentOptions,
    notices: tuple[str, ...],
    profile: Profile,
    words: tuple[str, ...] = (),
    answers: bool = True,
) -> Answer:
    """A search-only answer quoting these (ref, chunk) pairs around `words`; 'not in the documents' when there are
    none, and when they do not answer (`answers=False`) the quotes follow that notice under a label."""
    if not shown:
        return Answer(
            text=messages.NOT_IN_DOCUMENTS, answerable=False, mode="search_only", notices=notices, profile=profile
        )
    text = "\n\n".join(quote(chunk, ref, words) for ref, chunk in shown)
    if not answers:
        notices = (*notices, messages.NOT_IN_DOCUMENTS)
        text = f"{messages.CLOSEST_PASSAGE}\n{text}"
    rendered = render(text, dict(shown), link_for=options.link_for)
    return Answer(
        text=rendered.text,
        citations=rendered.citations,
        markers=rendered.markers,
        answerable=answers,
        mode="search_only",
        notices=notices,
        profile=profile,
    )


def quote(chunk: Chunk, ref: str, words: tuple[str, ...]) -> str:
    """`“…the sentences holding the words…” [S1] (dated 2026-01-12)`"""
    dated = f" ({messages.dated(chunk.doc_date)})" if chunk.doc_date else ""
    window = quote_window(chunk.text, topic_words(words, chunk), tabular=chunk.tabular)
    return f"“{window}” [{ref}]{dated}"
