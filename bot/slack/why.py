"""The "Why this answer?" item: the answer's overflow menu opens the turn's trace in a modal, for Folio's admins only.

Slack shows one message alike to everyone in the channel, so the menu item is there for all; the check is here, on
every click (a payload anyone could forge says nothing about who may see a trace): the clicker must be listed in
`admins:` in channels.yaml, by user ID or through a user group. Anyone else is told so, privately, and sees nothing.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.config.channels import is_user_id
from bot.slack.render import ACTION_MORE, WHY, escape, split_mrkdwn
from bot.slack.services import SlackFolio
from bot.slack.thread_actions import tell
from bot.slack.turns import describe_failure
from bot.store import ThreadKey
from bot.turns.trace import Trace

log = logging.getLogger(__name__)

ANSWERED = frozenset({"answered", "not_answered", "search_only"})  # the outcomes that add a turn to the thread
MODAL_BLOCKS = 100


def register(app: AsyncApp, folio: SlackFolio) -> None:
    async def on_menu(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                      client: AsyncWebClient) -> None:  # fmt: skip
        await ack()
        chosen = _chosen(action)
        message, channel = body.get("message") or {}, (body.get("channel") or {}).get("id")
        if chosen is None or chosen[0] != WHY or not message.get("ts") or not channel or not body.get("trigger_id"):
            return
        team = context.team_id or (body.get("team") or {}).get("id") or "-"
        thread = ThreadKey(team=team, channel=channel, thread_ts=message.get("thread_ts") or message["ts"])
        work = show_trace(folio, client, thread, body["user"]["id"], chosen[1], trigger_id=body["trigger_id"])
        folio.tasks.spawn(work, name=f"why {thread}")

    app.action(ACTION_MORE)(on_menu)


async def is_admin(folio: SlackFolio, *, team: str, user: str) -> bool:
    """Whether `user` is listed in `admins:` (by ID, or through one of the user groups listed there)."""
    admins = folio.channel_policy().admins
    if user in admins:
        return True
    groups = [key for key in admins if not is_user_id(key)]
    return bool(groups) and bool(await folio.access.memberships.groups_of(team, user, groups))


async def show_trace(folio: SlackFolio, client: AsyncWebClient, thread: ThreadKey, user: str, turn: int, *,
                     trigger_id: str) -> None:  # fmt: skip
    """Open the trace of the thread's `turn` for an admin; tell anyone else (and every failure) in the thread."""
    try:
        if not await is_admin(folio, team=thread.team, user=user):
            log.warning("a non-admin (%s) asked for the trace of %s: refused", user, thread)
            await tell(client, thread, user, messages.WHY_ADMINS_ONLY)
            return
        trace = await trace_of(folio, thread, turn)
        if trace is None:
            await tell(client, thread, user, messages.WHY_NO_TRACE)
            return
        await client.views_open(trigger_id=trigger_id, view=modal(trace))
    except Exception as error:
        log.warning("could not show the trace of %s", thread, exc_info=True)
        await tell(client, thread, user, describe_failure(error))


async def trace_of(folio: SlackFolio, thread: ThreadKey, turn: int) -> Trace | None:
    """The trace of the thread's `turn` (the nth turn that added an answer), or None when none is kept."""
    traces = folio.ledger.traces
    if traces is None:
        return None
    answered = [trace for trace in map(Trace.from_json, await traces.all(thread)) if trace.outcome in ANSWERED]
    return answered[turn] if 0 <= turn < len(answered) else None


def modal(trace: Trace) -> dict[str, Any]:
    """The trace as a modal view: its lines in sections of at most 3000 characters."""
    texts = split_mrkdwn("\n".join(escape(line) for line in trace.lines()))
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": text}} for text in texts][:MODAL_BLOCKS]
    return {"type": "modal", "title": {"type": "plain_text", "text": messages.WHY_TITLE},
            "close": {"type": "plain_text", "text": "Close"}, "blocks": blocks}  # fmt: skip


def _chosen(action: dict[str, Any]) -> tuple[str, int] | None:
    try:
        value = json.loads((action.get("selected_option") or {}).get("value") or "{}")
        return str(value.get("do")), int(value.get("turn", -1))
    except (ValueError, AttributeError, TypeError):
        return None
