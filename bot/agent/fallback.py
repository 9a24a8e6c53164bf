"""Answers without a model: the best passages quoted as they stand, each with its citation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot import messages
from bot.agent.options import AgentOptions
from bot.agent.sources import TurnSources
from bot.citations import render
from bot.models import Answer, Chunk, Conversation, Profile

if TYPE_CHECKING:
    from bot.retrieval import Retriever

QUOTES = 3  # passages quoted in a search-only answer
QUOTE_CHARS = 400


async def search_only(
    question: str,
    conversation: Conversation,
    *,
    retriever: Retriever,
    options: AgentOptions,
    notice: str,
    profile: Profile,
) -> Answer:
    """Search the question as asked and quote the best passages (SearchUnavailable propagates to the caller).

    Its own dedupe and budget: passages the model saw before it failed are still worth quoting.
    """
    chunks = await retriever.search(question, conversation.scope, top=options.search_top)
    admitted = TurnSources(conversation, budget=options.chunk_budget).admit(chunks[:QUOTES])
    return quoted_answer(admitted.shown, options=options, notices=(notice,), profile=profile)


def quoted_answer(
    shown: Sequence[tuple[str, Chunk]], *, options: AgentOptions, notices: tuple[str, ...], profile: Profile
) -> Answer:
    """A search-only answer quoting these (ref, chunk) pairs; 'not in the documents' when there are none."""
    if not shown:
        return Answer(
            text=messages.NOT_IN_DOCUMENTS, answerable=False, mode="search_only", notices=notices, profile=profile
        )
    text = "\n\n".join(f"> {excerpt(chunk.text)} [{ref}]" for ref, chunk in shown)
    rendered = render(text, dict(shown), link_for=options.link_for)
    return Answer(
        text=rendered.text,
        citations=rendered.citations,
        markers=rendered.markers,
        mode="search_only",
        notices=notices,
        profile=profile,
    )


def excerpt(text: str, limit: int = QUOTE_CHARS) -> str:
    """The passage on one line, cut at a word boundary."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + " …"
