"""How Slack enters the one door (bot.turns.consumer) after an ack already sent, and what it shows when the door
cannot take a turn or gives one up.

    await start_turn(folio, client, request)   # /ask, Think harder, a private answer: their trigger was deduped
    await lost(folio, client, request, error)  # Redis lost the turn before it ran: said and recorded
    await give_up(folio, request, shown_ts)    # the consumer's give-up: a turn that failed every attempt
"""

from __future__ import annotations

import logging

from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.errors import StoreUnavailable
from bot.slack.progress import StatusLineView
from bot.slack.services import SlackFolio
from bot.turns import TurnRecorder, TurnRequest, new_conversation

log = logging.getLogger(__name__)


async def start_turn(folio: SlackFolio, client: AsyncWebClient, request: TurnRequest) -> None:
    """After an ack already sent: take the turn on, the thread taken on without reading the policy (the turn
    resolves its scope once, after the lock); a store failure is shown in the thread and recorded."""
    try:
        await folio.consumer.accept(request, new=new_conversation(request))
    except StoreUnavailable as error:  # the turn is lost before it ran: the thread and the record say so
        folio.tasks.spawn(lost(folio, client, request, error), name=f"store-down {request.thread}")


async def lost(folio: SlackFolio, client: AsyncWebClient, request: TurnRequest, error: StoreUnavailable) -> None:
    """A turn Redis lost before it ran: said in the thread, and recorded like any other turn."""
    observer = TurnRecorder(request, content=folio.settings.folio_log_content)
    observer.failed(error)
    view = StatusLineView(client, channel=request.thread.channel, thread_ts=request.thread.thread_ts)
    if await view.failed(error) is not None:
        observer.seen()
    observer.finished()


async def give_up(folio: SlackFolio, request: TurnRequest, shown_ts: str | None) -> None:
    """A turn that failed every attempt: the thread is told, in the message an earlier attempt showed."""
    thread = request.thread
    view = StatusLineView(folio.slack, channel=thread.channel, thread_ts=thread.thread_ts, resumed_ts=shown_ts)
    await view.fail(messages.TURN_GAVE_UP)
