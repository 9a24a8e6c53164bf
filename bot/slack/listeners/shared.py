"""Slack Connect: a channel was shared with another organisation, or stopped being: ask Slack again on its next turn
instead of trusting the cached answer until FOLIO_ACCESS_TTL."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.services import SlackFolio


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.event("channel_shared")
    @app.event("channel_unshared")
    async def on_sharing_changed(event: dict[str, Any], context: AsyncBoltContext) -> None:
        channel = event.get("channel")
        if channel:
            team = context.team_id or event.get("team_id") or "-"
            folio.tasks.spawn(folio.access.organisation.forget_channel(team, channel), name=f"sharing {channel}")
