"""A turn in a Slack thread: take it on before the ack (`start_turn`), then run it (`run_slack_turn`).

    start_turn(folio, client, request)     # before the ack: drop a repeated delivery, take the place in line
    run_slack_turn(folio, request, resumed_ts=None)   # after it: the one turn (bot.turns), shown in the thread

Every failure ends in a message in the thread (see `bot.slack.failures.describe_failure`), and the progress
indicator is cleared; every turn, even one lost to Redis before it ran, leaves a turn record and its metrics.
"""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import metrics
from bot.errors import FolioError, StoreUnavailable
from bot.slack.failures import describe_failure
from bot.slack.progress import StatusLineView
from bot.slack.services import SlackFolio
from bot.slack.stream import StreamView
from bot.turns import PolicyScopes, TurnRecorder, TurnRequest, TurnServices, TurnView, answer, claim
from bot.turns.boundary import SharedSpaces
from bot.turns.governance import GovernedRecorder

log = logging.getLogger(__name__)

__all__ = ["TurnRequest", "describe_failure", "run_slack_turn", "start_turn"]


async def start_turn(
    folio: SlackFolio, client: AsyncWebClient, request: TurnRequest, *, delivery: str | None = None
) -> None:
    """Claim the delivery, take the thread's place in line, make the thread Folio's, and run the turn.

    The place in line taken here is the order turns of one thread run in, and from here on a plain reply in the
    thread is a follow-up (it waits for this turn, then chains from its answer). Messages call it just after the
    ack, in arrival order (bot.slack.listeners.messages); `/ask` and "Think harder" after theirs. The thread is
    taken on without reading the policy: the turn resolves its scope once, after the lock.
    """
    delivery = delivery or request.delivery
    try:
        lock = await folio.store.take_on(request.thread, delivery=delivery, new=claim(request))
    except StoreUnavailable as error:  # the turn is lost before it ran: the thread and the record say so
        folio.tasks.spawn(_lost(folio, client, request, error), name=f"store-down {request.thread}")
        return
    if lock is None:
        log.info("duplicate delivery %s dropped", delivery)
        metrics.duplicate_dropped("message")
        return
    folio.tasks.spawn(run_slack_turn(folio, request, resumed_ts=None, lock=lock), name=f"turn {request.thread}")


async def run_slack_turn(
    folio: SlackFolio, request: TurnRequest, *, resumed_ts: str | None,
    lock: AbstractAsyncContextManager[object] | None = None,
) -> None:  # fmt: skip
    """Run one accepted turn in its thread; `resumed_ts` is the message an earlier attempt of the same delivery
    showed, which this one edits instead of posting another. Never raises but for cancellation (shutdown,
    hand-back): a failure is shown in the thread, logged and recorded."""
    try:
        await answer(request, services=services(folio), view=view_for(folio, request, resumed_ts=resumed_ts),
                     observer=observer_for(folio, request), lock=lock)  # fmt: skip
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
    )  # fmt: skip


async def _lost(folio: SlackFolio, client: AsyncWebClient, request: TurnRequest, error: StoreUnavailable) -> None:
    """A turn Redis lost before it ran: said in the thread, and recorded like any other turn."""
    observer = TurnRecorder(request, content=folio.settings.folio_log_content)
    observer.failed(error)
    view = StatusLineView(client, channel=request.thread.channel, thread_ts=request.thread.thread_ts)
    if await view.failed(error) is not None:
        observer.shown()
    observer.finished()
