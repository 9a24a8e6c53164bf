"""A turn shown as one Slack stream: each step a task card as it happens, then the answer as the model writes it.

    view = StreamView(client, channel=..., thread_ts=..., user=..., team=..., link_for=..., memory=...)
    await view.working(messages.WORKING)                        # chat.startStream with a first card
    (steps and answer text: view.step_started / step_ended / text, while the agent runs)
    ts = await view.answer(answer, scope=..., turn_index=...)   # chat.stopStream: sources, filters, buttons

The turn never waits for Slack: its events only fill an outbox, and one sender task empties it. A card goes out as
soon as the sender is free (updates arriving meanwhile share one call, and pending text rides along); the first
text of the answer goes out at once (it is the "writing" step: the loop's "Writing the answer" steps get no card,
since most precede another tool round); after it, text alone goes out only while the answer holds TEXT_BATCH
characters per text-only append, so appendStream carries at most one per TEXT_BATCH characters. chat.stopStream
carries the rest. When the final answer is not the text that was streamed (a correction round, a preamble before
tool calls, quoted passages after a model failure) or has no valid citation, the streamed message is replaced by the
checked answer, which says so.

A failing stream method makes the turn go on as it would without streams: before the stream exists, with the thread
status or a placeholder (StatusLineView); after, by replacing the streamed message with chat.update. The workspace
is then remembered as one without streams for REMEMBER_SECONDS (for a rate limit, HTTP 429: only until its
Retry-After has passed, and the turns meanwhile are posted at once), in this process's memory only (`StreamMemory`, held
by the SlackFolio: each replica learns it once; a restart forgets it), unless the refusal was about that one message
only (MESSAGE_ENDED).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.agent.events import AnswerText, Step
from bot.models import Answer, Chunk, Scope
from bot.slack.progress import StatusLineView
from bot.slack.render import (
    SlackMessage,
    answer_footer,
    answer_markdown,
    citation_markdown,
    escape_markdown,
    render_answer,
)
from bot.slack.stream_chunks import card, markdown_chunks, step_card
from bot.slack.tables import TableHold

log = logging.getLogger(__name__)

TEXT_BATCH = 250  # answer characters per text-only appendStream, at least (appendStream is rate limited)
REMEMBER_SECONDS = 3600.0  # how long a workspace whose stream failed gets today's progress line instead
FIRST_CARD = "folio-start"
# Refusals about one streamed message, not the workspace: Slack ended it (an undocumented server timeout), its reader
# pressed Stop, it was deleted, or it is full (a streamed message holds about 12,000 characters in all, not per call).
# The turn goes on without it (the answer replaces it whole); the next turn streams again.
MESSAGE_ENDED = frozenset({"message_not_in_streaming_state", "stopped_by_user", "message_not_found", "msg_too_long"})
Json = dict[str, Any]


class StreamMemory:
    """Workspaces (team ids) where a stream method failed lately, with when to try streams again."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def allows(self, team: str) -> bool:
        return self._until.get(team, 0.0) <= time.monotonic()

    def refuse(self, team: str, *, seconds: float = REMEMBER_SECONDS) -> None:
        self._until[team] = time.monotonic() + seconds


class StreamView(StatusLineView):
    """One turn's stream in one thread; the status line or placeholder where streams fail."""

    def __init__(
        self, client: AsyncWebClient, *, channel: str, thread_ts: str, user: str, team: str | None,
        link_for: Callable[[Chunk], str | None], memory: StreamMemory,
    ) -> None:  # fmt: skip
        super().__init__(client, channel=channel, thread_ts=thread_ts)
        self._user, self._team, self._link_for, self._memory = user, team, link_for, memory
        self.stream_ts: str | None = None
        self.streaming = False  # a stream is open and working: the turn's answer text is wanted
        self._streamed = False  # the turn began with a stream: its steps are cards, not status lines
        self._outbox: list[Json] = []  # chunks not sent yet, in display order
        self._open: dict[str, Json] = {}  # cards shown as in progress
        self._pending_text = 0  # characters of markdown in the outbox
        self._text_total = 0  # characters of markdown queued in all (sent or not)
        self._text_appends = 0  # appends that carried text alone
        self._text_out = False  # some answer text has gone out
        self._written = ""  # the answer text streamed so far, as Answer.text writes it (`[n]` labels)
        self._draft = 0
        self._tables = TableHold()  # a table's rows wait for its last one
        self._stale = False  # text of an earlier draft was shown: the final answer replaces the stream
        self._wake = asyncio.Event()
        self._stopping = False
        self._sender: asyncio.Task[None] | None = None

    async def _start(self, text: str) -> None:
        """Open the stream with a first card saying Folio is at work; where that fails, today's status line."""
        if not self._team or not self._memory.allows(self._team):
            await super()._start(text)
            return
        first = card(FIRST_CARD, text)
        try:
            response = await self._client.chat_startStream(
                channel=self._channel, thread_ts=self._thread_ts, recipient_user_id=self._user,
                recipient_team_id=self._team, chunks=[first],
            )  # fmt: skip
        except SlackApiError as exc:
            self._refused("chat.startStream", exc)
            await super()._start(text)
            return
        self.stream_ts, self.streaming, self._streamed = str(response["ts"]), True, True
        self._open[FIRST_CARD] = first
        self._sender = asyncio.create_task(self._send_loop(), name=f"stream {self._channel} {self.stream_ts}")

    def writes_text(self) -> bool:
        return self.streaming

    async def step_started(self, step: Step) -> None:
        await (self._card(step) if self._streamed else super().step_started(step))

    async def step_ended(self, step: Step) -> None:
        if self._streamed:
            await self._card(step)

    async def text(self, piece: AnswerText) -> None:
        """Answer text into the outbox (most pieces only wait there: no need to wake the sender for them)."""
        if not self.streaming:  # the stream broke: the answer will replace what it showed
            return
        self._queue_text(piece)
        if self._text_due():
            self._wake.set()

    async def _card(self, step: Step) -> None:
        if not self.streaming:  # the stream broke: the answer will replace what it showed
            return
        self._close(FIRST_CARD)
        if step.kind != "write":
            self._queue_card(step_card(step, link_for=self._link_for))
        self._wake.set()

    async def answer(self, answer: Answer, *, scope: Scope, turn_index: int, basis: str | None = None) -> str | None:
        """End the turn with its checked answer; returns the ts of the message that shows it."""
        if self.stream_ts is None:
            return await super().finish(render_answer(answer, scope=scope, turn_index=turn_index, basis=basis))
        footer = answer_footer(answer, scope=scope, turn_index=turn_index, basis=basis).block_dicts()
        streamed = bool(self._written)
        replaced = answer  # what an update shows when the stream cannot end with the answer itself
        if self.streaming and streamed and self._needs_replacing(answer):
            await self._stop()
            if answer.mode == "model":  # quoted passages after a model failure say why in their own notice
                replaced = answer.model_copy(update={"notices": (*answer.notices, messages.STREAM_REPLACED)})
        elif await self._stop(markdown="" if streamed else answer_markdown(answer), blocks=footer):
            return self.stream_ts
        self.placeholder_ts = self.stream_ts
        return await super().finish(render_answer(replaced, scope=scope, turn_index=turn_index, basis=basis))

    async def finish(self, message: SlackMessage) -> str:
        """Replace whatever was streamed with `message` (a failure, a notice)."""
        if self.stream_ts is not None and not self._stopping:
            await self._stop()
            self.placeholder_ts = self.stream_ts
        return await super().finish(message)

    def _needs_replacing(self, answer: Answer) -> bool:
        return self._stale or self._written != answer.text or not answer.answerable

    def _queue_card(self, chunk: Json) -> None:
        if chunk["status"] == "in_progress":
            self._open[chunk["id"]] = chunk
        else:
            self._open.pop(chunk["id"], None)
        for index, queued in enumerate(self._outbox):  # a card not sent yet shows its latest state only
            if queued.get("id") == chunk["id"]:
                self._outbox[index] = chunk
                return
        self._outbox.append(chunk)

    def _close(self, card_id: str) -> None:
        opened = self._open.get(card_id)
        if opened is not None:
            self._queue_card({**opened, "status": "complete"})

    def _queue_text(self, event: AnswerText) -> None:
        if event.draft != self._draft:
            self._stale = self._stale or bool(self._written)  # an earlier draft's text is on screen already
            self._draft = event.draft
        if self._stale:
            return
        if not self._written:  # the answer is being written: every step before it is done
            for card_id in list(self._open):
                self._close(card_id)
        self._written += f"[{event.citation.label}]" if event.citation else event.text
        text = self._tables.feed(citation_markdown(event.citation) if event.citation else escape_markdown(event.text))
        if not text:  # a table being written: it goes out whole
            return
        if self._outbox and self._outbox[-1]["type"] == "markdown_text":
            self._outbox[-1] = {"type": "markdown_text", "text": self._outbox[-1]["text"] + text}
        else:
            self._outbox.append({"type": "markdown_text", "text": text})
        self._pending_text += len(text)
        self._text_total += len(text)

    def _card_waits(self) -> bool:
        return any(chunk["type"] == "task_update" for chunk in self._outbox)

    def _text_due(self) -> bool:
        """Text may go alone when it is the answer's first, or once the answer holds TEXT_BATCH characters per
        text-only append made, this one included (the k-th waits for k x TEXT_BATCH characters)."""
        more = not self._text_out or self._text_total >= TEXT_BATCH * (self._text_appends + 1)
        return self._pending_text > 0 and more

    def _due(self) -> list[Json]:
        """What the sender should send now: everything when a card waits, or text alone when it is due."""
        if self._card_waits():
            self._text_out = self._text_out or self._pending_text > 0
            return self._take()
        if self._text_due():
            self._text_out, self._text_appends = True, self._text_appends + 1
            return self._take()
        return []

    def _take(self) -> list[Json]:
        chunks, self._outbox, self._pending_text = self._outbox, [], 0
        return [piece for chunk in chunks for piece in _split(chunk)]

    async def _send_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            chunks = self._due()
            if not chunks:
                continue
            try:
                assert self.stream_ts is not None  # the sender runs once the stream started
                await self._client.chat_appendStream(channel=self._channel, ts=self.stream_ts, chunks=chunks)
            except Exception as exc:  # noqa: BLE001 - any failure: the turn goes on without the stream
                self._refused("chat.appendStream", exc)
                return

    async def _stop(self, *, markdown: str = "", blocks: list[Json] | None = None) -> bool:
        """Stop the sender and the stream, sending what is left; False when Slack refused (already noted)."""
        self._stopping = True
        self._wake.set()
        if self._sender is not None:
            await self._sender
        for card_id in list(self._open):
            self._close(card_id)
        markdown = self._tables.flush() + markdown  # a table that ended the answer
        chunks = self._take() + (markdown_chunks(markdown) if markdown else [])
        if not self.streaming:  # the sender found the stream broken: nothing more goes through it
            return False
        self.streaming = False
        assert self.stream_ts is not None  # streaming: the stream started
        try:
            await self._client.chat_stopStream(channel=self._channel, ts=self.stream_ts, chunks=chunks, blocks=blocks)
        except Exception as exc:  # noqa: BLE001 - the caller shows the answer by updating the message instead
            self._refused("chat.stopStream", exc)
            return False
        return True

    def _refused(self, method: str, exc: Exception) -> None:
        reason = exc.response.get("error") if isinstance(exc, SlackApiError) else repr(exc)
        self.streaming = False
        if reason in MESSAGE_ENDED:
            log.info("%s refused (%s): this answer goes on without its stream", method, reason)
            return
        wait = retry_after(exc)
        if wait is not None:  # Slack's rate tier (startStream: about 20 a minute): post until it lets streams in
            log.info("%s rate limited: answers in workspace %s are posted for %.0f s", method, self._team, wait)
        else:
            log.warning("%s failed (%s): no streams in workspace %s for a while", method, reason, self._team)
        if self._team:
            self._memory.refuse(self._team, seconds=REMEMBER_SECONDS if wait is None else wait)


def retry_after(exc: Exception) -> float | None:
    """The seconds a 429 answer asks to wait (Retry-After; 1 when it names none), or None for any other failure."""
    response = exc.response if isinstance(exc, SlackApiError) else None
    if response is None or response.status_code != 429:
        return None
    value = (response.headers or {}).get("Retry-After") or (response.headers or {}).get("retry-after")
    value = value[0] if isinstance(value, list | tuple) and value else value
    try:
        return max(1.0, float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1.0


def _split(chunk: Json) -> list[Json]:
    return markdown_chunks(chunk["text"]) if chunk["type"] == "markdown_text" else [chunk]
