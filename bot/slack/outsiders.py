"""Slack Connect on the surfaces that explain Folio: the assistant's greeting and prompts, `/ask access` and `/ask
help`. A person of another organisation is told only what the policy lets them search (as bot.turns.boundary decides
their turns), never the organisation's containers or prompts. (An `/ask` question of theirs is refused before its
restatement by the turn's first step, bot.turns.turn.open_turn, through bot.turns.boundary.)

    stranger(folio, team=..., user=...)        None for a person of this organisation, else what they may search
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.access import outsider_dm_scope
from bot.app import Folio
from bot.errors import NotConnected
from bot.models import Scope


@dataclass(frozen=True)
class Outsider:
    """A person of another organisation, and what they may search in a DM (None: nothing)."""

    dm_scope: Scope | None


async def stranger(folio: Folio, *, team: str, user: str) -> Outsider | None:
    """None for a person of this organisation (or when Folio has no Slack access to ask); AccessUnavailable when
    Slack cannot say (callers then show nothing internal)."""
    if folio.access is None or not await folio.access.organisation.is_outsider(team, user):
        return None
    return Outsider(outsider_dm_scope(folio.channel_policy(), user))


def allows_outsiders(folio: Folio, channel: str) -> bool:
    """Whether the channel's rule says `external: allow` (its container may be named to anyone there)."""
    try:
        return folio.channel_policy().rule_for(channel).external == "allow"
    except NotConnected:
        return False
