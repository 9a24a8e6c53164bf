"""The buttons under an answer: helpful / not helpful, Think harder, Delete this conversation."""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import thread_actions
from bot.slack.render import ACTION_DELETE, ACTION_HELPFUL, ACTION_NOT_HELPFUL, ACTION_THINK_HARDER
from bot.slack.turns import Folio
from bot.store import ThreadKey

log = logging.getLogger(__name__)


def register(app: AsyncApp, folio: Folio) -> None:
    async def on_button(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                        client: AsyncWebClient) -> None:  # fmt: skip
        await ack()
        thread = _thread_of(body, context)
        if thread is None or not await _first_click(folio, body):
            return
        user, turn = body["user"]["id"], _turn_of(action)
        name = action["action_id"]
        if name == ACTION_DELETE:
            work = thread_actions.delete_conversation(folio, client, thread, user)
        elif name == ACTION_THINK_HARDER:
            work = thread_actions.think_harder(folio, client, thread, user, turn)
        else:
            vote = "helpful" if name == ACTION_HELPFUL else "not_helpful"
            work = thread_actions.store_feedback(folio, client, thread, user, turn, vote)
        folio.tasks.spawn(work, name=f"{name} {thread}")

    for action_id in (ACTION_HELPFUL, ACTION_NOT_HELPFUL, ACTION_THINK_HARDER, ACTION_DELETE):
        app.action(action_id)(on_button)


def _thread_of(body: dict[str, Any], context: AsyncBoltContext) -> ThreadKey | None:
    message, channel = body.get("message") or {}, (body.get("channel") or {}).get("id")
    if not message.get("ts") or not channel:
        return None
    team = context.team_id or (body.get("team") or {}).get("id") or "-"
    return ThreadKey(team=team, channel=channel, thread_ts=message.get("thread_ts") or message["ts"])


def _turn_of(action: dict[str, Any]) -> int:
    try:
        return int(json.loads(action.get("value") or "{}").get("turn", -1))
    except (ValueError, AttributeError):
        return -1


async def _first_click(folio: Folio, body: dict[str, Any]) -> bool:
    trigger = body.get("trigger_id")
    if not trigger:
        return True
    try:
        return await folio.store.first_delivery("delivery", f"trigger:{trigger}")
    except Exception:  # the work itself reports the store being down to the clicker
        return True
