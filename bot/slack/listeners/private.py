""" "Search what only I can see": the button of the offer Folio showed one person under a channel answer."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import private
from bot.slack.render import ACTION_PRIVATE
from bot.slack.services import SlackFolio


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.action(ACTION_PRIVATE)
    async def on_private(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        await ack()
        user = (body.get("user") or {}).get("id")
        team = context.team_id or (body.get("team") or {}).get("id")
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        if user and team and channel:
            click = private.Click(user=user, team=team, channel=channel, value=str(action.get("value") or ""))
            folio.tasks.spawn(private.answer_privately(folio, client, click), name=f"private {user}")
