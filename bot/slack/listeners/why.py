""" "Why this answer?": the Home tab's buttons, the link modal's submission, and the overflow menu answers carried
before (still heard, no longer shown). Each checks that the person is an admin today, whatever the payload says; a
non-admin sees a refusal and, from the Home tab, their tab published again without the entry.

Clicks are acked at once and the modal opened right after (a trigger_id is good for 3 seconds). The link modal's
submission is answered in its ack (Slack's `response_action`: the trace in the modal's place, or an error under the
field), so the admin check and the lookup (a Redis read) run before it.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.slack import home, why
from bot.slack.failures import describe_failure
from bot.slack.listeners.actions import answer_clicked
from bot.slack.render import ACTION_MORE, WHY
from bot.slack.services import SlackFolio
from bot.slack.thread_actions import tell
from bot.store import ThreadKey

log = logging.getLogger(__name__)


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.action(home.ACTION_WHY_LINK)
    async def on_link_button(
        ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        await ack()
        if (clicked := _clicker(body, context)) is not None:
            team, user, trigger_id = clicked
            folio.tasks.spawn(_ask_link(folio, client, team, user, trigger_id), name=f"why link {user}")

    @app.action(home.ACTION_WHY_THREAD)
    async def on_thread_button(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        await ack()
        if (clicked := _clicker(body, context)) is None:
            return
        team, user, trigger_id = clicked
        if (thread := home.thread_clicked(str(action.get("value") or ""), team)) is not None:
            folio.tasks.spawn(_show_thread(folio, client, thread, user, trigger_id), name=f"why {thread}")

    @app.view(why.VIEW_WHY_LINK)
    async def on_link(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        user = (body.get("user") or {}).get("id")
        team = context.team_id or (body.get("team") or {}).get("id") or "-"
        if not user:
            await ack()
            return
        await ack(**await why.link_answer(folio, team=team, user=user, text=why.link_text(body.get("view") or {})))

    @app.action(ACTION_MORE)
    async def on_menu(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        await ack()
        chosen = _chosen(action)
        if chosen is None or chosen[0] != WHY or not body.get("trigger_id"):
            return
        if (clicked := answer_clicked(body, context)) is None:
            return
        thread, user = clicked
        work = _show_turn(folio, client, thread, user, chosen[1], trigger_id=body["trigger_id"])
        folio.tasks.spawn(work, name=f"why {thread}")


async def _ask_link(folio: SlackFolio, client: AsyncWebClient, team: str, user: str, trigger_id: str) -> None:
    """The Home tab's "Why this answer?": the link modal for an admin."""
    try:
        admin = await why.is_admin(folio, team=team, user=user)
    except Exception as error:
        await why.open_modal(client, trigger_id, why.notice(describe_failure(error)))
        return
    if admin:
        await why.open_modal(client, trigger_id, why.link_modal())
    else:
        await _refuse(folio, client, team, user, trigger_id)


async def _show_thread(
    folio: SlackFolio, client: AsyncWebClient, thread: ThreadKey, user: str, trigger_id: str
) -> None:
    """ "Why?" beside one of the latest answers: the thread's traces for an admin."""
    try:
        if not await why.is_admin(folio, team=thread.team, user=user):
            await _refuse(folio, client, thread.team, user, trigger_id)
            return
        traces = await why.for_reader(folio, team=thread.team, user=user, traces=await why.traces_of(folio, thread))
        view = why.modal(traces, numbered=True) if traces else why.notice(messages.WHY_NO_TRACE)
    except Exception as error:
        log.warning("could not show the trace of %s", thread, exc_info=True)
        view = why.notice(describe_failure(error))
    await why.open_modal(client, trigger_id, view)


async def _refuse(folio: SlackFolio, client: AsyncWebClient, team: str, user: str, trigger_id: str) -> None:
    """A non-admin asked (a forged payload, or an admin no longer): say so, and publish their tab without traces."""
    log.warning("a non-admin (%s) asked for a trace: refused", user)
    await why.open_modal(client, trigger_id, why.notice(messages.WHY_ADMINS_ONLY))
    await home.publish(folio, client, team=team, user=user)


async def _show_turn(
    folio: SlackFolio, client: AsyncWebClient, thread: ThreadKey, user: str, turn: int, *, trigger_id: str
) -> None:
    """An old answer's overflow item: the trace of its turn for an admin; anyone else (and every failure) is told
    in the thread."""
    try:
        if not await why.is_admin(folio, team=thread.team, user=user):
            log.warning("a non-admin (%s) asked for the trace of %s: refused", user, thread)
            await tell(client, thread, user, messages.WHY_ADMINS_ONLY)
            return
        trace = await why.trace_of(folio, thread, turn)
        if trace is None:
            await tell(client, thread, user, messages.WHY_NO_TRACE)
            return
        shown = await why.for_reader(folio, team=thread.team, user=user, traces=[trace])
        await client.views_open(trigger_id=trigger_id, view=why.modal(shown))
    except Exception as error:
        log.warning("could not show the trace of %s", thread, exc_info=True)
        await tell(client, thread, user, describe_failure(error))


def _clicker(body: dict[str, Any], context: AsyncBoltContext) -> tuple[str, str, str] | None:
    """(workspace, person, trigger_id) of a click, or None when the payload lacks one."""
    user, trigger_id = (body.get("user") or {}).get("id"), body.get("trigger_id")
    team = context.team_id or (body.get("team") or {}).get("id")
    return (str(team), str(user), str(trigger_id)) if user and trigger_id and team else None


def _chosen(action: dict[str, Any]) -> tuple[str, int] | None:
    try:
        value = json.loads((action.get("selected_option") or {}).get("value") or "{}")
        return str(value.get("do")), int(value.get("turn", -1))
    except (ValueError, AttributeError, TypeError):
        return None
