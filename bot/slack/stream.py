"""A turn shown as one Slack stream: each step a task card as it happens, then the answer as the model writes it.

    view = StreamView(client, channel=..., thread_ts=..., user=..., team=..., streams=Streams(...))
    await view.working(messages.WORKING)                        # chat.startStream with a first card
    (steps and answer text: view.step_started / step_ended / text, while the agent runs)
    ts = await view.answer(answer, scope=..., turn_index=...)   # chat.stopStream: sources, filters, buttons

The turn never waits for Slack: its events only fill an outbox (`bot.slack.stream_outbox`: what goes when), and one
sender task empties it. A card goes out at once, with the text that is ready; the answer's first whole words go out
at once; after that, text goes when the oldest unsent text has waited about half a second (sooner when much has
gathered), never cutting a word, a citation or a table. Every append is paid from the workspace's budget of
chat.appendStream calls (`StreamPace`, shared by every stream of every process through Redis, sized to Slack's tier
4), so many streams at once send fewer, fuller appends instead of meeting 429. A stream that cannot get budget for
STARVED seconds sends nothing more until its end (chat.stopStream, its own method, carries the rest) and the
workspace's next turns are posted meanwhile. The stop waits for nothing but an append already on its way.

When the final answer is not the text that was streamed (a correction round, a preamble before tool calls, quoted
passages after a model failure) or has no valid citation, the streamed message is replaced by the checked answer,
which says so.

A failing stream method makes the turn go on as it would without streams: before the stream exists, with the thread
status or a placeholder (the StatusLineView the stream holds); after, by replacing the streamed message with
chat.update. The workspace is then remembered as one without streams for REMEMBER_SECONDS (for a rate limit, HTTP
429: only until its Retry-After has passed, and the turns meanwhile are posted at once), in this process's memory
only (`StreamMemory`, held by the SlackFolio: each replica learns it once; a restart forgets it), unless the refusal
was about that one message only (MESSAGE_ENDED).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.agent.events import AnswerText, Step
from bot.errors import StoreUnavailable
from bot.models import Answer, Chunk, Scope
from bot.slack.failures import describe_failure
from bot.slack.progress import StatusLineView
from bot.slack.render import (
    answer_footer,
    answer_markdown,
    citation_markdown,
    escape_markdown,
    render_answer,
)
from bot.slack.stream_chunks import card, step_card
from bot.slack.stream_outbox import Outbox
from bot.slack.tables import TableHold

log = logging.getLogger(__name__)

STARVED = 10.0  # seconds a stream waits for an append's budget before it sends nothing more until its end
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


class StreamPace(Protocol):
    """The workspace's budget of chat.appendStream calls (`bot.store.pace.SharedPace`), shared by every stream."""

    async def take(self, name: str) -> float: ...

    async def drain(self, name: str, *, seconds: float) -> None: ...


@dataclass(frozen=True, kw_only=True)
class Streams:
    """What every stream of a process shares: where streams failed lately, the workspace's append budget, the links
    a card's sources get, and the clock the sender paces by."""

    memory: StreamMemory
    pace: StreamPace
    link_for: Callable[[Chunk], str | None]
    clock: Callable[[], float] = time.monotonic


class StreamView:
    """One turn's stream in one thread; the status line or placeholder (a StatusLineView it holds) where streams
    fail."""

    def __init__(
        self, client: AsyncWebClient, *, channel: str, thread_ts: str, user: str, team: str | None, streams: Streams
    ) -> None:
        self._line = StatusLineView(client, channel=channel, thread_ts=thread_ts)
        self._client, self._channel, self._thread_ts = client, channel, thread_ts
        self._user, self._team = user, team
        self._link_for, self._memory, self._pace = streams.link_for, streams.memory, streams.pace
        self._clock = streams.clock
        self.stream_ts: str | None = None
        self.streaming = False  # a stream is open and working: the turn's answer text is wanted
        self._streamed = False  # the turn began with a stream: its steps are cards, not status lines
        self._outbox = Outbox()
        self._open: dict[str, Json] = {}  # cards shown as in progress
        self._written = ""  # the answer text streamed so far, as Answer.text writes it (`[n]` labels)
        self._draft = 0
        self._tables = TableHold()  # a table's rows wait for its last one
        self._stale = False  # text of an earlier draft was shown: the final answer replaces the stream
        self._wake = asyncio.Event()
        self._asleep_until = float("inf")  # when the sender wakes by itself; new text due sooner wakes it
        self._stopping = False
        self._sender: asyncio.Task[None] | None = None

    async def working(self, title: str) -> None:
        """Open the stream with a first card saying Folio is at work; where that fails, today's status line."""
        if not self._team or not self._memory.allows(self._team):
            await self._line.working(title)
            return
        first = card(FIRST_CARD, title)
        try:
            response = await self._client.chat_startStream(
                channel=self._channel,
                thread_ts=self._thread_ts,
                recipient_user_id=self._user,
                recipient_team_id=self._team,
                chunks=[first],
            )
        except SlackApiError as exc:
            self._refused("chat.startStream", exc)
            await self._line.working(title)
            return
        self.stream_ts, self.streaming, self._streamed = str(response["ts"]), True, True
        self._open[FIRST_CARD] = first
        self._sender = asyncio.create_task(self._send_loop(), name=f"stream {self._channel} {self.stream_ts}")

    def writes_text(self) -> bool:
        return self.streaming

    def shown_ts(self) -> str | None:
        """The streamed message, or the placeholder where the turn shows no stream."""
        return self.stream_ts or self._line.shown_ts()

    async def step_started(self, step: Step) -> None:
        await (self._card(step) if self._streamed else self._line.step_started(step))

    async def step_ended(self, step: Step) -> None:
        if self._streamed:
            await self._card(step)

    async def text(self, piece: AnswerText) -> None:
        """Answer text into the outbox; the sender is woken only when it is due sooner than the sender would wake."""
        if not self.streaming:  # the stream broke: the answer will replace what it showed
            return
        self._queue_text(piece)
        now = self._clock()
        due = self._outbox.due(now=now)
        if due is not None and due < self._asleep_until:
            self._wake.set()

    async def notice(self, text: str) -> None:
        await self._line.notice(text)

    async def _card(self, step: Step) -> None:
        if not self.streaming:  # the stream broke: the answer will replace what it showed
            return
        self._close(FIRST_CARD)
        if step.kind != "write":
            self._queue_card(step_card(step, link_for=self._link_for))
        if self._clock() < self._asleep_until:  # not while it waits for budget: a card does not bring any
            self._wake.set()

    async def answer(self, answer: Answer, *, scope: Scope, turn_index: int, basis: str | None = None) -> str | None:
        """End the turn with its checked answer; returns the ts of the message that shows it."""
        if self.stream_ts is None:
            return await self._line.answer(answer, scope=scope, turn_index=turn_index, basis=basis)
        footer = answer_footer(answer, scope=scope, turn_index=turn_index, basis=basis).block_dicts()
        streamed = bool(self._written)
        replaced = answer  # what an update shows when the stream cannot end with the answer itself
        if self.streaming and streamed and self._needs_replacing(answer):
            await self._stop()
            if answer.mode == "model":  # quoted passages after a model failure say why in their own notice
                replaced = answer.model_copy(update={"notices": (*answer.notices, messages.STREAM_REPLACED)})
        elif await self._stop(markdown="" if streamed else answer_markdown(answer), blocks=footer):
            return self.stream_ts
        message = render_answer(replaced, scope=scope, turn_index=turn_index, basis=basis)
        return await self._line.finish(message, replacing=self.stream_ts)

    async def failed(self, error: BaseException) -> str | None:
        """Replace whatever was streamed with what went wrong; never raises."""
        if self.stream_ts is None:
            return await self._line.failed(error)
        if not self._stopping:
            await self._stop()
        return await self._line.fail(describe_failure(error), replacing=self.stream_ts)

    def _needs_replacing(self, answer: Answer) -> bool:
        return self._stale or self._written != answer.text or not answer.answerable

    def _queue_card(self, chunk: Json) -> None:
        if chunk["status"] == "in_progress":
            self._open[chunk["id"]] = chunk
        else:
            self._open.pop(chunk["id"], None)
        self._outbox.card(chunk)

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
        self._outbox.text(text, whole=event.citation is not None, now=self._clock())  # a table goes out whole

    async def _send_loop(self) -> None:
        """Sends what is due, each append paid from the workspace's budget; returns when the stream stops, breaks,
        or cannot get budget for STARVED seconds (then chat.stopStream carries the rest)."""
        while not self._stopping:
            now = self._clock()
            due = self._outbox.due(now=now)
            if due is None or due > now:
                await self._sleep(None if due is None else due - now)
                continue
            if not await self._granted():
                return
            chunks = self._outbox.take(now=self._clock())
            if not chunks:
                continue
            try:
                assert self.stream_ts is not None  # the sender runs once the stream started
                await self._client.chat_appendStream(channel=self._channel, ts=self.stream_ts, chunks=chunks)
            except Exception as exc:  # noqa: BLE001 - any failure: the turn goes on without the stream
                wait = retry_after(exc)
                if wait is None:
                    self._refused("chat.appendStream", exc)
                    return
                self._outbox.put_back(chunks)  # not shown: the stop carries it
                await self._limited(wait)
                return

    async def _limited(self, wait: float) -> None:
        """Slack answered an append 429 all the same (another app on the token, a tier lower than documented): no
        stream of the workspace appends before Retry-After, new turns are posted meanwhile, and this one's stop
        carries the rest."""
        team = str(self._team)
        log.info("chat.appendStream rate limited: workspace %s appends nothing for %.0f s", team, wait)
        self._memory.refuse(team, seconds=wait)
        try:
            await self._pace.drain(team, seconds=wait)
        except StoreUnavailable:
            log.warning("could not share the rate limit of workspace %s (Redis failed)", team)

    async def _granted(self) -> bool:
        """Wait for one append from the workspace's budget; False when stopping or starved (nothing more is sent
        before the stop, which then carries everything left: no appendStream is spent on it)."""
        asked = self._clock()
        team = str(self._team)
        while not self._stopping:
            try:
                wait = await self._pace.take(team)
            except StoreUnavailable:  # no shared budget to spend: nothing more goes before the stop
                log.warning("no budget for stream appends (Redis failed): the answer comes whole at its end")
                return False
            if wait <= 0:
                return True
            if self._clock() + wait - asked > STARVED:
                log.info("stream appends in workspace %s wait %.1f s for budget: answers are posted", team, wait)
                self._memory.refuse(team, seconds=STARVED)  # the next turns take the posted path meanwhile
                return False
            await self._sleep(wait, budget=True)
        return False

    async def _sleep(self, seconds: float | None, *, budget: bool = False) -> None:
        """Until `seconds` pass (None: until woken), or something wakes the sender: a card or due text, or the stop
        alone while it waits for `budget` (more to send does not bring budget sooner; it only widens the batch)."""
        self._asleep_until = float("-inf") if budget else float("inf") if seconds is None else self._clock() + seconds
        try:
            async with asyncio.timeout(seconds):
                await self._wake.wait()
        except TimeoutError:
            pass
        finally:
            self._wake.clear()
            self._asleep_until = self._clock()

    async def _stop(self, *, markdown: str = "", blocks: list[Json] | None = None) -> bool:
        """Stop the sender and the stream, sending what is left; False when Slack refused (already noted)."""
        self._stopping = True
        self._wake.set()
        if self._sender is not None:
            await self._sender
        for card_id in list(self._open):
            self._close(card_id)
        self._outbox.text(self._tables.flush() + markdown, whole=True, now=self._clock())  # a table that ended it
        chunks = self._outbox.rest()
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
