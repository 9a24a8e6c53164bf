"""Slack user groups changed: refresh the cached membership at once instead of waiting for FOLIO_ACCESS_TTL."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from bot.access import Memberships
from bot.slack.services import SlackFolio


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.event("subteam_members_changed")
    async def on_members_changed(event: dict[str, Any], context: AsyncBoltContext) -> None:
        group = event.get("subteam_id")
        if group:
            team = context.team_id or event.get("team_id") or "-"
            work = folio.access.memberships.refresh_group(team, group, removed=event.get("removed_users") or ())
            folio.tasks.spawn(work, name=f"subteam {group}")

    @app.event("subteam_updated")
    async def on_updated(event: dict[str, Any], context: AsyncBoltContext) -> None:
        group = (event.get("subteam") or {}).get("id")
        if group:
            team = context.team_id or event.get("team_id") or "-"
            work = _updated(folio.access.memberships, team, group, disabled=bool(event["subteam"].get("date_delete")))
            folio.tasks.spawn(work, name=f"subteam {group}")


async def _updated(memberships: Memberships, team: str, group: str, *, disabled: bool) -> None:
    """A renamed handle or a disabled group: look handles up again, and the members (none, when disabled)."""
    await memberships.forget_handles(team)
    if disabled:
        await memberships.disable_group(team, group)
    else:
        await memberships.refresh_group(team, group)
