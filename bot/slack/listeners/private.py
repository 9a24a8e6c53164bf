""" "Search what only I can see": the button of the offer Folio showed one person under a channel answer."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import private
from bot.slack.render import ACTION_PRIVATE
from bot.slack.services import SlackFolio


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.action(ACTION_PRIVATE)
    async def on_private(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        user = (body.get("user") or {}).get("id")
        if user and action.get("value"):
            work = private.answer_privately(folio, client, user, action["value"])
            folio.tasks.spawn(work, name=f"private {user}")
