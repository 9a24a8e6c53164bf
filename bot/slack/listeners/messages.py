"""Mentions in channels, direct messages, and plain replies in threads Folio already answers.

Slack gets its ack after one Redis round trip (bot.turns.consumer `accept`): the delivery is recorded where any
worker can pick it up, deduped, and the thread's place in line taken; only then is it acked. When Redis cannot
record it the listener raises, so Bolt answers 500 over HTTP (Socket Mode sends no ack) and Slack delivers it again:
an accepted question is never lost with a worker, and a question Redis could not take is never acked. Whether a
plain reply is in Folio's thread is decided after the ack, by the turn (a reply elsewhere ends there, silently).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import StoreUnavailable
from bot.models import is_direct_message
from bot.slack.assistant import name_thread
from bot.slack.commands import clean_question
from bot.slack.door import lost
from bot.slack.middleware import DELIVERY, LAST_RETRY, RETRY
from bot.slack.services import SlackFolio
from bot.store import ThreadKey
from bot.turns import TurnRequest, new_conversation
from bot.turns.request import SharedFile

log = logging.getLogger(__name__)

HOLD_REPLY = 300.0  # seconds a reply that came with Slack's last retry waits here for Redis
MAX_SHARED = 20  # files taken from one message (Slack attaches at most 10; a forged event may list more)


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
    if so take it on before the ack (raises StoreUnavailable, so it is not acked, while Redis cannot record it)."""
    channel, ts = event["channel"], event["ts"]
    thread = ThreadKey(
        team=context.team_id or event.get("team") or "-", channel=channel, thread_ts=event.get("thread_ts") or ts
    )
    is_dm = is_direct_message(channel)  # Slack says so too: channel_type "im"
    text = event.get("text") or ""
    mentions_us = bool(context.bot_user_id) and f"<@{context.bot_user_id}" in text
    if not mentioned and not is_dm and (thread.thread_ts == ts or mentions_us):
        return  # a new message in a channel is for people, and a reply mentioning Folio is its app_mention's
    request = TurnRequest(
        thread=thread,
        question=clean_question(text, bot_user_id=context.bot_user_id),
        user=event["user"],
        is_dm=is_dm,
        asker_team=event.get("user_team"),  # Slack Connect: the asker's own workspace
        delivery=context.get(DELIVERY),
        files=shared_files(event),
    )
    reply = not mentioned and not is_dm  # answered only when the thread is Folio's
    new = (
        None if reply else new_conversation(request)
    )  # taken on without reading the policy: the turn resolves its scope
    try:
        accepted = await folio.consumer.accept(request, new=new, reply=reply)
    except StoreUnavailable as error:
        if (context.get(RETRY) or 0) < LAST_RETRY:
            log.warning("store unavailable: delivery %s not acknowledged, so Slack sends it again", request.delivery)
            raise  # Bolt answers 500 (HTTP) or sends no ack (Socket Mode)
        if reply:  # Slack's last try, and only Redis can say whether the thread is Folio's: hold it until then
            log.warning("store unavailable at Slack's last retry; holding a reply in %s until Redis is back", thread)
            folio.tasks.spawn(_accept_when_back(folio, request), name=f"held reply {thread}")
            return
        folio.tasks.spawn(lost(folio, client, request, error), name=f"store-down {thread}")  # told and recorded
        return
    if accepted and request.is_dm:  # an assistant thread's first question: its title
        folio.tasks.spawn(
            name_thread(folio.access, client, request.thread, request.user, request.question), name="title"
        )


def shared_files(event: dict[str, Any]) -> tuple[SharedFile, ...]:
    """The files a message shares, by id (the turn asks Slack for each); at most MAX_SHARED a message."""
    found = [file for file in event.get("files") or () if isinstance(file, dict) and isinstance(file.get("id"), str)]
    return tuple(
        SharedFile(id=file["id"], name=str(file.get("name") or file.get("title") or "file")[:255])
        for file in found[:MAX_SHARED]
    )


async def _accept_when_back(folio: SlackFolio, request: TurnRequest) -> None:
    """A reply Slack will not deliver again: take it on as soon as Redis answers (it is lost only if this process
    stops, or Redis stays down HOLD_REPLY seconds more)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HOLD_REPLY
    while loop.time() < deadline:
        await asyncio.sleep(1.0)
        try:
            await folio.consumer.accept(request, new=None, reply=True)
            return
        except StoreUnavailable:
            continue
    log.warning("Redis stayed unreachable; a reply in %s goes unanswered", request.thread)
