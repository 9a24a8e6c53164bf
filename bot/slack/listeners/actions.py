"""The buttons under an answer: helpful / not helpful, Think harder, Delete this conversation, one listener each;
and the watch note's Answer again.

Repeated clicks (the same trigger_id) were dropped by the middleware; each listener acks, then hands the work to a
background task that answers the clicker in the thread.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.models import is_direct_message
from bot.slack import thread_actions
from bot.slack.render import ACTION_DELETE, ACTION_HELPFUL, ACTION_NOT_HELPFUL, ACTION_THINK_HARDER
from bot.slack.services import SlackFolio
from bot.store import ThreadKey
from bot.turns.watch_post import ACTION_ANSWER_AGAIN

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Clicked:
    """What a button's value names, as the click carries it (anyone can forge it: each work checks what it names)."""

    turn: int = -1  # which turn of the thread the answer was
    note: str | None = None  # the watch note's id (its Answer again)


Work = Callable[[SlackFolio, AsyncWebClient, ThreadKey, str, Clicked], Coroutine[Any, Any, None]]

# What each button starts after the ack: (folio, client, thread, clicker, what its value names) -> the work.
BUTTONS: dict[str, Work] = {
    ACTION_HELPFUL: lambda folio, client, thread, user, value: thread_actions.store_feedback(
        folio, client, thread, user, value.turn, "helpful"
    ),
    ACTION_NOT_HELPFUL: lambda folio, client, thread, user, value: thread_actions.store_feedback(
        folio, client, thread, user, value.turn, "not_helpful"
    ),
    ACTION_THINK_HARDER: lambda folio, client, thread, user, value: thread_actions.think_harder(
        folio, client, thread, user, value.turn, is_dm=is_direct_message(thread.channel)
    ),
    ACTION_ANSWER_AGAIN: lambda folio, client, thread, user, value: thread_actions.answer_again(
        folio, client, thread, user, is_dm=is_direct_message(thread.channel), note=value.note
    ),
    ACTION_DELETE: lambda folio, client, thread, user, value: thread_actions.delete_conversation(
        folio, client, thread, user
    ),
}


def register(app: AsyncApp, folio: SlackFolio) -> None:
    for action_id, work in BUTTONS.items():
        app.action(action_id)(_listener(folio, action_id, work))


def _listener(folio: SlackFolio, action_id: str, work: Work) -> Callable[..., Awaitable[None]]:
    """The listener of one button: ack, then run its work in the background for the clicked answer's thread."""

    async def on_click(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        await ack()
        clicked = _clicked(body, action, context)
        if clicked is not None:
            thread, user, value = clicked
            folio.tasks.spawn(work(folio, client, thread, user, value), name=f"{action_id} {thread}")

    return on_click


def answer_clicked(body: dict[str, Any], context: AsyncBoltContext) -> tuple[ThreadKey, str] | None:
    """The thread of the answer whose button or menu was clicked, and who clicked; None when the payload names no
    message in a channel. Every control under an answer reads its click so."""
    message, channel = body.get("message") or {}, (body.get("channel") or {}).get("id")
    if not message.get("ts") or not channel:
        return None
    team = context.team_id or (body.get("team") or {}).get("id") or "-"
    thread = ThreadKey(team=team, channel=channel, thread_ts=message.get("thread_ts") or message["ts"])
    return thread, body["user"]["id"]


def _clicked(
    body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext
) -> tuple[ThreadKey, str, Clicked] | None:
    """The thread of the answer clicked, who clicked, and what the button's value names."""
    clicked = answer_clicked(body, context)
    return None if clicked is None else (*clicked, _value_of(action))


def _value_of(action: dict[str, Any]) -> Clicked:
    """The button's value read leniently: what is not there, or not of its type, is left out."""
    try:
        value = json.loads(action.get("value") or "{}")
        turn = int(value.get("turn", -1))
    except (ValueError, TypeError, AttributeError):
        return Clicked()
    note = value.get("note")
    return Clicked(turn=turn, note=note if isinstance(note, str) else None)
