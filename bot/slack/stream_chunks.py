"""The chunks of a Slack stream, from turn events. Pure functions: values in, chunk dicts out.

A step is a `task_update` card (https://docs.slack.dev/reference/methods/chat.appendStream): "Rephrasing the
question" with the rewrite as its details, "Searching: ..." with the passages it found as URL sources (title, page,
link), "Calculating" with the code's output. Card titles, details and outputs hold 256 characters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.agent.events import Step
from bot.citations import display_name
from bot.models import Chunk
from bot.slack.render import escape_markdown

Json = dict[str, Any]
TASK_FIELD_LIMIT = 256
MARKDOWN_LIMIT = 12_000  # characters of markdown_text in one chunk
_STATUS = {"started": "in_progress", "done": "complete", "failed": "error"}


def fit(text: str, limit: int = TASK_FIELD_LIMIT) -> str:
    """`text` cut to `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def card(card_id: str, title: str, status: str = "in_progress") -> Json:
    """A bare task card: `status` is Slack's (pending, in_progress, complete, error)."""
    return {"type": "task_update", "id": card_id, "title": fit(title.replace("@", "@\u2060")), "status": status}


def step_card(step: Step, *, link_for: Callable[[Chunk], str | None]) -> Json:
    """The card of one step as it starts or ends; a search's end lists the passages it found as URL sources."""
    chunk = card(step.id, step.title, _STATUS[step.status])
    if step.status == "started":
        return chunk
    if step.kind == "rewrite" and step.detail:
        chunk["details"] = fit(escape_markdown(step.detail))
    elif step.detail:
        chunk["output"] = fit(escape_markdown(step.detail))
    sources = url_sources(step.sources, link_for=link_for)
    if sources:
        chunk["sources"] = sources
    return chunk


def url_sources(shown: tuple[tuple[str, Chunk], ...], *, link_for: Callable[[Chunk], str | None]) -> list[Json]:
    """`{"type": "url", "text": "handbook.pdf, page 4", "url": ...}` per page found; passages without a link are left
    out (a URL source needs one)."""
    sources: dict[str, Json] = {}
    for _, chunk in shown:
        url = link_for(chunk)
        if url and url not in sources:
            page = f", page {chunk.cited_page}" if chunk.cited_page is not None else ""
            sources[url] = {"type": "url", "text": fit(display_name(chunk.file) + page), "url": url}
    return list(sources.values())


def markdown_chunks(text: str) -> list[Json]:
    """`markdown_text` chunks of at most MARKDOWN_LIMIT characters each."""
    return [
        {"type": "markdown_text", "text": text[start : start + MARKDOWN_LIMIT]}
        for start in range(0, len(text), MARKDOWN_LIMIT)
    ]
