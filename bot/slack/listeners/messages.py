"""Mentions in channels, direct messages, and plain replies in threads Folio already answers.

Slack gets its ack before any Redis round trip: the listener decides from the event alone whether a message may be
a question, and hands the rest (is the reply in Folio's thread, the delivery claim, the thread's place in line) to a
background task. So an ack waits for no Redis reply, and no Redis reply waits for turns the event loop is running.
A repeated delivery is still answered once (the claim drops it), and a thread's turns still run in arrival order.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import StoreUnavailable
from bot.slack.assistant import name_thread
from bot.slack.commands import clean_question
from bot.slack.middleware import DELIVERY
from bot.slack.services import SlackFolio
from bot.slack.turns import TurnRequest, start_turn
from bot.store import ThreadKey

log = logging.getLogger(__name__)


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient) -> None:
        await on_message_event(folio, client, context, event, mentioned=True)

    @app.event("message")
    async def on_message(event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient) -> None:
        await on_message_event(folio, client, context, event, mentioned=False)


async def on_message_event(
    folio: SlackFolio, client: AsyncWebClient, context: AsyncBoltContext, event: dict[str, Any], *, mentioned: bool
) -> None:
    """Decide whether a person's message (the middleware let only those through) may be a question for Folio, and
    if so take it on after the ack."""
    channel, ts = event["channel"], event["ts"]
    thread = ThreadKey(team=context.team_id or event.get("team") or "-", channel=channel,
                       thread_ts=event.get("thread_ts") or ts)  # fmt: skip
    is_dm = event.get("channel_type") == "im"
    text = event.get("text") or ""
    mentions_us = bool(context.bot_user_id) and f"<@{context.bot_user_id}" in text
    if not mentioned and not is_dm and (thread.thread_ts == ts or mentions_us):
        return  # a new message in a channel is for people, and a reply mentioning Folio is its app_mention's
    request = TurnRequest(
        thread=thread, question=clean_question(text, bot_user_id=context.bot_user_id), user=event["user"], is_dm=is_dm,
        asker_team=event.get("user_team"),  # Slack Connect: the asker's own workspace
    )
    reply = not mentioned and not is_dm  # answered only when the thread is Folio's
    folio.tasks.spawn(_take_on(folio, client, request, delivery=context.get(DELIVERY), reply=reply),
                      name=f"take on {thread}")  # fmt: skip


async def _take_on(
    folio: SlackFolio, client: AsyncWebClient, request: TurnRequest, *, delivery: str | None, reply: bool
) -> None:
    if reply and not await _continues_a_conversation(folio, request.thread):
        return
    await start_turn(folio, client, request, delivery=delivery)
    if request.is_dm:  # an assistant thread's first question becomes its title
        folio.tasks.spawn(name_thread(folio.access, client, request.thread, request.user, request.question),
                          name="title")  # fmt: skip


async def _continues_a_conversation(folio: SlackFolio, thread: ThreadKey) -> bool:
    try:
        return await folio.store.exists(thread)
    except StoreUnavailable:  # cannot tell whether this is Folio's thread, so stay quiet rather than intrude
        log.warning("store unavailable; ignoring a reply in %s", thread)
        return False
