"""A turn in a Slack thread, once it is accepted (bot.slack.consumer): `run_slack_turn`.

    run_slack_turn(folio, request, resumed_ts=None, on_shown=None)   # the one turn (bot.turns), shown in the thread

Every failure ends in a message in the thread (see `bot.slack.failures.describe_failure`), and the progress
indicator is cleared; every turn, even one lost to Redis before it ran, leaves a turn record and its metrics.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.agent.events import AnswerText, Step
from bot.errors import FolioError, LeaseLost, StoreUnavailable
from bot.models import Answer, Scope
from bot.slack.failures import describe_failure
from bot.slack.progress import StatusLineView
from bot.slack.services import SlackFolio
from bot.slack.stream import StreamView
from bot.turns import PolicyScopes, TurnRecorder, TurnRequest, TurnServices, TurnView, answer
from bot.turns.boundary import SharedSpaces
from bot.turns.governance import GovernedRecorder

log = logging.getLogger(__name__)

__all__ = ["Shown", "TurnRequest", "describe_failure", "lost", "run_slack_turn"]

Shown = Callable[[str], Awaitable[None]]  # told the ts of each message the turn shows, as soon as it exists


async def run_slack_turn(
    folio: SlackFolio, request: TurnRequest, *, resumed_ts: str | None,
    lock: AbstractAsyncContextManager[object] | None = None, on_shown: Shown | None = None,
) -> None:  # fmt: skip
    """Run one accepted turn in its thread; `resumed_ts` is the message an earlier attempt of the same delivery
    showed, which this one edits instead of posting another; `on_shown` hears the ts of each message the turn shows
    (its stream or placeholder, then its answer or failure), so that a later attempt can find it. Never raises but
    for cancellation (shutdown, hand-back) and LeaseLost (the thread's lease lapsed under the turn: the thread was
    told LEASE_LOST, and the consumer runs the turn again in that message); any other failure is shown in the
    thread, logged and recorded."""
    view = view_for(folio, request, resumed_ts=resumed_ts)
    try:
        await answer(request, services=services(folio), view=view if on_shown is None else NotedView(view, on_shown),
                     observer=observer_for(folio, request), lock=lock)  # fmt: skip
    except LeaseLost:
        raise
    except Exception as error:  # shown in the thread already; an operator wants what was not foreseen
        if not isinstance(error, FolioError | TimeoutError | SlackApiError):
            log.exception("turn failed in %s", request.thread, exc_info=error)
        return
    if not request.is_dm:  # "Search what only I can see", to an asker whose access reaches further
        from bot.slack.private import offer  # it builds on this module

        await offer(folio, folio.slack, request)


def services(folio: SlackFolio) -> TurnServices:
    """What a Slack turn runs on: conversations in Redis, today's policy and access, the busy loop's gate."""
    return TurnServices(
        model=folio.model, retriever=folio.retriever, options=folio.options, conversations=folio.store,
        scopes=SharedSpaces(PolicyScopes(folio.channel_policy, folio.access), folio.channel_policy,
                            folio.access.organisation),
        timeout=folio.turn_timeout,
        admit=folio.tasks.gate.wait_for_room, guard=folio.budget.check,
    )  # fmt: skip


def observer_for(folio: SlackFolio, request: TurnRequest) -> GovernedRecorder:
    """The turn's record, its usage counted and its trace kept (bot.turns.governance)."""
    return GovernedRecorder(request, content=folio.settings.folio_log_content, ledger=folio.ledger,
                            spawn=folio.tasks.spawn)  # fmt: skip


def view_for(folio: SlackFolio, request: TurnRequest, *, resumed_ts: str | None = None) -> TurnView:
    """The view of one turn, chosen once: a stream when FOLIO_STREAMING is on (and no earlier attempt showed a
    message to reuse), else the status line or placeholder."""
    thread = request.thread
    if not folio.settings.folio_streaming or resumed_ts is not None:
        return StatusLineView(folio.slack, channel=thread.channel, thread_ts=thread.thread_ts, resumed_ts=resumed_ts)
    return StreamView(
        folio.slack, channel=thread.channel, thread_ts=thread.thread_ts, user=request.user,
        team=thread.team if thread.team != "-" else None, link_for=folio.options.link_for, memory=folio.streams,
        pace=folio.stream_pace,
    )  # fmt: skip


class NotedView:
    """A Slack view that tells `on_shown` the ts of each message it shows, the moment it exists: the stream or
    placeholder `working` opened, then the message of the answer or of the failure (when it is another one)."""

    def __init__(self, view: TurnView, on_shown: Shown) -> None:
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


async def lost(folio: SlackFolio, client: AsyncWebClient, request: TurnRequest, error: StoreUnavailable) -> None:
    """A turn Redis lost before it ran: said in the thread, and recorded like any other turn."""
    observer = TurnRecorder(request, content=folio.settings.folio_log_content)
    observer.failed(error)
    view = StatusLineView(client, channel=request.thread.channel, thread_ts=request.thread.thread_ts)
    if await view.failed(error) is not None:
        observer.shown()
    observer.finished()
