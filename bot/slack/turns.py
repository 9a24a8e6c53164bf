"""A turn in a Slack thread, once the one door (bot.turns.consumer) accepted it: `run_slack_turn`, the runner
`bot.slack.app.serving` gives the consumer.

    run_slack_turn(folio, request, attempt)   # the one turn (bot.turns), shown in the thread

Every failure ends in a message in the thread (see `bot.slack.failures.describe_failure`), and the progress
indicator is cleared; every turn, even one lost to Redis before it ran, leaves a turn record and its metrics.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

from bot.agent.events import AnswerText, Step
from bot.app import builders
from bot.errors import FolioError, LeaseLost
from bot.models import Answer, Scope
from bot.slack.files import SlackFiles
from bot.slack.private import PrivateScope, offer
from bot.slack.progress import StatusLineView
from bot.slack.services import SlackFolio
from bot.slack.stream import Streams, StreamView
from bot.turns import PolicyScopes, TurnRecorder, TurnRequest, TurnServices, TurnView, take_turn
from bot.turns.boundary import SharedSpaces
from bot.turns.consumer import Attempt, OnShown
from bot.turns.scope import Scopes
from bot.turns.thread_files import ThreadFileRules, ThreadFiles

log = logging.getLogger(__name__)


async def run_slack_turn(folio: SlackFolio, request: TurnRequest, attempt: Attempt) -> None:
    """Run one attempt at an accepted turn in its thread: it edits the message an earlier attempt showed
    (`attempt.resumed_ts`) instead of posting another, and tells `attempt.on_shown` the ts of each message it shows
    (its stream or placeholder, then its answer or failure), so that a later attempt can find it. Never raises but
    for cancellation (shutdown, hand-back) and LeaseLost (the thread's lease lapsed under the turn: the thread was
    told LEASE_LOST, and the consumer runs the turn again in that message); any other failure is shown in the
    thread, logged and recorded."""
    view = NotedView(view_for(folio, request, resumed_ts=attempt.resumed_ts), attempt.on_shown)
    try:
        await take_turn(
            request,
            services=services(folio, request),
            view=view,
            observer=observer_for(folio, request),
            lock=attempt.lock,
        )
    except LeaseLost:
        raise
    except Exception as error:  # shown in the thread already; an operator wants what was not foreseen
        if not isinstance(error, FolioError | TimeoutError | SlackApiError):
            log.exception("turn failed in %s", request.thread, exc_info=error)
        return
    if not request.is_dm:  # "Search what only I can see", to an asker whose access reaches further
        await offer(folio, folio.slack, request)


def services(folio: SlackFolio, request: TurnRequest) -> TurnServices:
    """What a Slack turn runs on: conversations in Redis, today's policy and access (widened by the asker's own for
    a private answer), the busy loop's gate, the budget."""
    scopes: Scopes = PolicyScopes(folio.channel_policy, folio.access)
    if request.private_from is not None:
        scopes = PrivateScope(folio.channel_policy, folio.access, request.private_from)
    return TurnServices(
        model=folio.model,
        retriever=folio.retriever,
        options=folio.options,
        conversations=folio.store,
        scopes=SharedSpaces(scopes, folio.channel_policy, folio.access.organisation),
        timeout=folio.turn_timeout,
        admit=folio.tasks.gate.wait_for_room,
        guard=folio.budget.check,
        files=thread_files(folio),
    )


def thread_files(folio: SlackFolio) -> ThreadFiles | None:
    """How a Slack turn reads the files shared in its thread (None when FOLIO_THREAD_FILES is 0)."""
    settings = folio.settings
    if not settings.folio_thread_files:
        return None
    rules = ThreadFileRules(
        max_bytes=int(settings.folio_thread_file_mb * 1024 * 1024),
        max_files=settings.folio_thread_files,
        max_pages=settings.folio_thread_file_pages,
        max_chars=settings.folio_max_file_chars,
        days=settings.folio_thread_file_days,
    )
    return ThreadFiles(
        source=SlackFiles(folio.slack, folio.access.organisation),
        index=folio.retriever,
        documents=folio.documents,
        rules=rules,
        converters=builders.converters(settings),
    )


def observer_for(folio: SlackFolio, request: TurnRequest) -> TurnRecorder:
    """The turn's record, its usage counted and its trace kept (bot.turns.governance)."""
    return TurnRecorder(request, content=folio.settings.folio_log_content, ledger=folio.ledger, spawn=folio.tasks.spawn)


def view_for(folio: SlackFolio, request: TurnRequest, *, resumed_ts: str | None = None) -> TurnView:
    """The view of one turn, chosen once: a stream when FOLIO_STREAMING is on (and no earlier attempt showed a
    message to reuse), else the status line or placeholder."""
    thread = request.thread
    if not folio.settings.folio_streaming or resumed_ts is not None:
        return StatusLineView(folio.slack, channel=thread.channel, thread_ts=thread.thread_ts, resumed_ts=resumed_ts)
    return StreamView(
        folio.slack,
        channel=thread.channel,
        thread_ts=thread.thread_ts,
        user=request.user,
        team=thread.team if thread.team != "-" else None,
        streams=Streams(memory=folio.streams, pace=folio.stream_pace, link_for=folio.options.link_for),
    )


class NotedView:
    """A Slack view that tells `on_shown` the ts of each message it shows, the moment it exists: the stream or
    placeholder `working` opened, then the message of the answer or of the failure (when it is another one)."""

    def __init__(self, view: TurnView, on_shown: OnShown) -> None:
        self._view = view
        self._on_shown = on_shown

    async def working(self, title: str) -> None:
        await self._view.working(title)
        await self._note(self._view.shown_ts())

    def writes_text(self) -> bool:
        return self._view.writes_text()

    def shown_ts(self) -> str | None:
        return self._view.shown_ts()

    async def step_started(self, step: Step) -> None:
        await self._view.step_started(step)

    async def step_ended(self, step: Step) -> None:
        await self._view.step_ended(step)

    async def text(self, piece: AnswerText) -> None:
        await self._view.text(piece)

    async def answer(self, answer: Answer, *, scope: Scope, turn_index: int, basis: str | None) -> str | None:
        return await self._note(await self._view.answer(answer, scope=scope, turn_index=turn_index, basis=basis))

    async def notice(self, text: str) -> None:
        await self._view.notice(text)

    async def failed(self, error: BaseException) -> str | None:
        return await self._note(await self._view.failed(error))

    async def _note(self, ts: str | None) -> str | None:
        if ts is not None:
            await self._on_shown(ts)
        return ts
