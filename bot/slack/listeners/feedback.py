"""Slack's native feedback buttons under an answer, and the 👎 form they open.

The click is acked at once; the form opens right after (its trigger_id is good for 3 seconds) and the vote is kept
in the background. The form's submission is acked at once too (Slack closes it), its reason kept after.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import feedback
from bot.slack.listeners.actions import answer_clicked
from bot.slack.render import ACTION_FEEDBACK
from bot.slack.services import SlackFolio
from bot.store import ThreadKey


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.action(ACTION_FEEDBACK)
    async def on_feedback(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        await ack()
        clicked = _clicked(body, action, context)
        if clicked is None:
            return
        thread, user, turn, rating = clicked
        if rating == "not_helpful" and body.get("trigger_id"):
            folio.tasks.spawn(feedback.open_form(client, body["trigger_id"], thread, user, turn), name="feedback form")
        folio.tasks.spawn(feedback.record_click(folio, client, thread, user, turn, rating), name=f"feedback {thread}")

    @app.view(feedback.FORM)
    async def on_form(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        user = (body.get("user") or {}).get("id")
        if user:
            folio.tasks.spawn(feedback.record_reason(folio, client, user, body.get("view") or {}), name="feedback why")


def _clicked(
    body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext
) -> tuple[ThreadKey, str, int, Any] | None:
    """The answer's thread, who clicked, which turn, and the verdict ("helpful" / "not_helpful")."""
    rating, _, turn = str(action.get("value") or "").partition(":")
    if rating not in {"helpful", "not_helpful"} or not turn.isdigit():
        return None
    clicked = answer_clicked(body, context)
    return None if clicked is None else (*clicked, int(turn), rating)
