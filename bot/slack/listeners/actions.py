"""The buttons under an answer: helpful / not helpful, Think harder, Delete this conversation, one listener each.

Repeated clicks (the same trigger_id) were dropped by the middleware; each listener acks, then hands the work to a
background task that answers the clicker in the thread.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Coroutine
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import Folio
from bot.slack import thread_actions
from bot.slack.render import ACTION_DELETE, ACTION_HELPFUL, ACTION_NOT_HELPFUL, ACTION_THINK_HARDER
from bot.store import ThreadKey

log = logging.getLogger(__name__)


def register(app: AsyncApp, folio: Folio) -> None:
    def spawn(name: str, work: Coroutine[Any, Any, None], thread: ThreadKey) -> None:
        folio.tasks.spawn(work, name=f"{name} {thread}")

    @app.action(ACTION_HELPFUL)
    async def on_helpful(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                         client: AsyncWebClient) -> None:  # fmt: skip
        await ack()
        if (clicked := _clicked(body, action, context)) is not None:
            thread, user, turn = clicked
            spawn(ACTION_HELPFUL, thread_actions.store_feedback(folio, client, thread, user, turn, "helpful"), thread)

    @app.action(ACTION_NOT_HELPFUL)
    async def on_not_helpful(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                             client: AsyncWebClient) -> None:  # fmt: skip
        await ack()
        if (clicked := _clicked(body, action, context)) is not None:
            thread, user, turn = clicked
            work = thread_actions.store_feedback(folio, client, thread, user, turn, "not_helpful")
            spawn(ACTION_NOT_HELPFUL, work, thread)

    @app.action(ACTION_THINK_HARDER)
    async def on_think_harder(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any],
                              context: AsyncBoltContext, client: AsyncWebClient) -> None:  # fmt: skip
        await ack()
        if (clicked := _clicked(body, action, context)) is not None:
            thread, user, turn = clicked
            is_dm = thread.channel.startswith("D")
            spawn(ACTION_THINK_HARDER, thread_actions.think_harder(folio, client, thread, user, turn, is_dm), thread)

    @app.action(ACTION_DELETE)
    async def on_delete(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                        client: AsyncWebClient) -> None:  # fmt: skip
        await ack()
        if (clicked := _clicked(body, action, context)) is not None:
            thread, user, _ = clicked
            spawn(ACTION_DELETE, thread_actions.delete_conversation(folio, client, thread, user), thread)


def _clicked(body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext) -> tuple[ThreadKey, str, int] | None:
    """The thread of the answer clicked, who clicked, and which turn of the thread the answer was."""
    message, channel = body.get("message") or {}, (body.get("channel") or {}).get("id")
    if not message.get("ts") or not channel:
        return None
    team = context.team_id or (body.get("team") or {}).get("id") or "-"
    thread = ThreadKey(team=team, channel=channel, thread_ts=message.get("thread_ts") or message["ts"])
    return thread, body["user"]["id"], _turn_of(action)


def _turn_of(action: dict[str, Any]) -> int:
    try:
        return int(json.loads(action.get("value") or "{}").get("turn", -1))
    except (ValueError, AttributeError):
        return -1
