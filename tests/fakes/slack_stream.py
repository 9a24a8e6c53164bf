"""Slack's rules for streamed messages (chat.startStream / appendStream / stopStream), for tests/fakes/slack_api.py.

From https://docs.slack.dev/reference/methods/chat.startStream (and appendStream, stopStream) and the method
definitions Slack publishes: `channel` and `thread_ts` start a stream, which outside a DM also needs
`recipient_user_id` and `recipient_team_id` (`missing_recipient_user_id` / `missing_recipient_team_id`);
`markdown_text` holds at most 12,000 characters; chunks are `markdown_text` (text), `task_update` (id, title,
status pending | in_progress | complete | error, details, output, sources of `{"type": "url", "text", "url"}`),
`plan_update` (title) and `blocks`; anything else is `invalid_chunks`. The 12,000 characters hold for the whole
streamed message too, not only for one call: past them Slack refuses the append or stop with `msg_too_long`
(undocumented; measured by Slack SDK users, e.g. CopilotKit/CopilotKit#6064). An append or stop names a streaming
message (`message_not_found` for an unknown ts, `message_not_in_streaming_state` once it was stopped). The 256-character
limits of a task's title, details and output are the ones Slack's SDK integrations report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]
MARKDOWN_LIMIT = 12_000
TASK_FIELD_LIMIT = 256
TASK_STATUSES = {"pending", "in_progress", "complete", "error"}


@dataclass
class StreamState:
    """What a streamed message shows besides its blocks: its markdown so far and its task cards."""

    markdown: str = ""
    tasks: dict[str, Json] = field(default_factory=dict)  # by id, in the order first shown; latest fields win
    plan_title: str | None = None
    streaming: bool = True
    recipient: tuple[str | None, str | None] = (None, None)  # (user, team)


@dataclass(frozen=True)
class View:
    """What a person saw of one message at one moment (every change of a message Folio posted is recorded)."""

    at: float  # wall clock (time.time()), comparable with other processes' clocks
    channel: str
    ts: str
    text: str
    markdown: str = ""
    tasks: tuple[Json, ...] = ()
    blocks: tuple[Json, ...] = ()
    streaming: bool = False
    deleted: bool = False


def start_problem(params: Json) -> str | None:
    """Why chat.startStream would refuse `params` (None when it is fine)."""
    if not params.get("channel"):
        return "channel_not_found"
    if not params.get("thread_ts"):
        return "invalid_arguments"
    if not str(params["channel"]).startswith("D"):  # a DM knows its recipient; a channel must be told
        if not params.get("recipient_team_id"):
            return "missing_recipient_team_id"
        if not params.get("recipient_user_id"):
            return "missing_recipient_user_id"
    return content_problem(params, required=False)


def content_problem(params: Json, *, required: bool) -> str | None:
    """Why the markdown_text / chunks of a stream call are refused (`no_text` when `required` and both missing)."""
    markdown, chunks = params.get("markdown_text"), params.get("chunks")
    if required and not markdown and not chunks:
        return "no_text"
    if markdown is not None and chunks is not None:  # one or the other (refused by Slack, vercel/chat#886)
        return "invalid_arguments"
    if markdown is not None and (not isinstance(markdown, str) or len(markdown) > MARKDOWN_LIMIT):
        return "msg_too_long" if isinstance(markdown, str) else "invalid_arguments"
    if chunks is None:
        return None
    if not isinstance(chunks, list) or not all(isinstance(chunk, dict) for chunk in chunks):
        return "invalid_chunks"
    return next((problem for chunk in chunks if (problem := _chunk_problem(chunk))), None)


def _chunk_problem(chunk: Json) -> str | None:
    kind = chunk.get("type")
    if kind == "markdown_text":
        text = chunk.get("text")
        if not isinstance(text, str):
            return "invalid_chunks"
        return "msg_too_long" if len(text) > MARKDOWN_LIMIT else None
    if kind == "task_update":
        return _task_problem(chunk)
    if kind == "plan_update":
        return None if isinstance(chunk.get("title"), str) else "invalid_chunks"
    if kind == "blocks":
        return None if isinstance(chunk.get("blocks"), list) else "invalid_chunks"
    return "invalid_chunks"


def _task_problem(chunk: Json) -> str | None:
    allowed = {"type", "id", "title", "status", "details", "output", "sources"}
    if set(chunk) - allowed or not isinstance(chunk.get("id"), str) or not chunk["id"]:
        return "invalid_chunks"
    if not isinstance(chunk.get("title"), str) or chunk.get("status") not in TASK_STATUSES:
        return "invalid_chunks"
    for name in ("title", "details", "output"):
        value = chunk.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > TASK_FIELD_LIMIT):
            return "invalid_chunks"
    sources = chunk.get("sources")
    if sources is None:
        return None
    if not isinstance(sources, list):
        return "invalid_chunks"
    for source in sources:
        ok = isinstance(source, dict) and set(source) == {"type", "text", "url"} and source["type"] == "url"
        if not ok or not str(source["url"]).startswith(("https://", "http://")) or not source["text"]:
            return "invalid_chunks"
    return None


def total_problem(state: StreamState, params: Json) -> str | None:
    """`msg_too_long` when the call would take the streamed message's markdown past MARKDOWN_LIMIT in all."""
    added = len(params.get("markdown_text") or "") + sum(
        len(chunk["text"]) for chunk in params.get("chunks") or [] if chunk["type"] == "markdown_text"
    )
    return "msg_too_long" if len(state.markdown) + added > MARKDOWN_LIMIT else None


def apply(state: StreamState, params: Json) -> None:
    """Show the markdown_text and chunks of one stream call (its content was checked first)."""
    if params.get("markdown_text"):
        state.markdown += params["markdown_text"]
    for chunk in params.get("chunks") or []:
        if chunk["type"] == "markdown_text":
            state.markdown += chunk["text"]
        elif chunk["type"] == "task_update":
            state.tasks[chunk["id"]] = {**state.tasks.get(chunk["id"], {}), **chunk}
        elif chunk["type"] == "plan_update":
            state.plan_title = chunk["title"]
