"""The Bolt middleware that decides, before any listener runs, what is not for Folio and what was seen before.

Messages: Bolt already drops Folio's own events; this drops other bots' messages and non-person subtypes (edits,
joins, bot posts), and names each message's delivery (`context["delivery"]`) and Slack's retry count. A listener
records that name durably in the same round trip that takes the thread's place in line, before the ack
(bot.turns.consumer), so Slack's retries and the `message` twin of an `app_mention` are answered once. Buttons
and commands: a repeated `trigger_id` is dropped. Every request: the listeners' client paces chat.postMessage.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot import metrics
from bot.app.slack_calls import PacedWebClient
from bot.errors import StoreUnavailable
from bot.store import ConversationStore

log = logging.getLogger(__name__)

DELIVERY = "delivery"  # the context key listeners read the delivery name from
RETRY = "retry_num"  # the context key of Slack's retry count (0: the first delivery; Slack retries 3 times at most)
LAST_RETRY = 3
MESSAGE_EVENTS = {"message", "app_mention"}
# Message subtypes that are a person writing; every other subtype (edits, joins, bot posts) is not a question.
PERSON_SUBTYPES = {None, "file_share", "thread_broadcast"}


def from_a_person(event: dict[str, Any], bot_user_id: str | None) -> bool:
    """False for Folio's own messages, other bots and non-message subtypes."""
    if event.get("bot_id") or event.get("subtype") not in PERSON_SUBTYPES:
        return False
    return bool(event.get("user")) and event.get("user") != bot_user_id


def message_delivery(team: str, event: dict[str, Any]) -> str:
    """One name per message: its `message` and `app_mention` events, and Slack's retries of either, share it."""
    return f"message:{team}:{event.get('channel')}:{event.get('ts')}"


class Deliveries(AsyncMiddleware):
    """Drops what is not a person's question and repeated deliveries; names the delivery of every message."""

    def __init__(self, store: ConversationStore) -> None:
        self._store = store

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        body, context = req.body, req.context
        event = body.get("event") or {}
        if body.get("type") == "event_callback" and event.get("type") in MESSAGE_EVENTS:
            if not from_a_person(event, context.bot_user_id):
                return await context.ack()
            context[DELIVERY] = message_delivery(context.team_id or event.get("team") or "-", event)
            context[RETRY] = int((req.headers.get("x-slack-retry-num") or ["0"])[0] or 0)
            return await next()
        trigger = body.get("trigger_id")
        if trigger and not await self._first(f"trigger:{trigger}"):
            log.info("repeated delivery of trigger %s dropped", trigger)
            metrics.duplicate_dropped("trigger")
            return await context.ack()
        return await next()

    async def _first(self, name: str) -> bool:
        try:
            return await self._store.first_delivery("delivery", name)
        except StoreUnavailable:  # the work itself tells the person that the store is down
            return True


class PacedPosts(AsyncMiddleware):
    """Bolt hands each listener a plain client it makes per request from the app's; this swaps in one sharing the
    app client's pacer, so that every chat.postMessage keeps its channel's pace (bot.app.slack_calls.ChannelPacer)."""

    def __init__(self, client: PacedWebClient) -> None:
        self._client = client

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        req.context["client"] = self._client.like(req.context.client)
        return await next()
