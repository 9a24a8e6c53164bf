"""`folio doctor`'s Slack Connect line: which connected channels are shared with another organisation, and whether
the policy lets Folio answer there (`external: allow`) or Folio refuses."""

from __future__ import annotations

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.access.organisation import shared_outside
from bot.app.verdicts import Check
from bot.config import ChannelPolicy

PART = "slack connect"


async def sharing_check(client: AsyncWebClient, policy: ChannelPolicy | None) -> Check:
    """Ask conversations.info for every channel the policy connects; list the ones shared outside."""
    if policy is None or not policy.channels:
        return Check(PART, "skip", "no channels in the policy to check")
    shared, unknown = [], []
    for channel in policy.channels:
        try:
            info = await client.conversations_info(channel=channel)
        except (SlackApiError, aiohttp.ClientError, TimeoutError):
            unknown.append(channel)
            continue
        if shared_outside(info.get("channel") or {}):
            shared.append(channel)
    return _verdict(policy, shared, unknown)


def _verdict(policy: ChannelPolicy, shared: list[str], unknown: list[str]) -> Check:
    allowed = [channel for channel in shared if policy.channels[channel].external == "allow"]
    refused = [channel for channel in shared if channel not in allowed]
    facts = {"shared_outside": shared, "external_allowed": allowed, "unknown": unknown}
    parts = [f"{channel} (external: allow)" for channel in allowed] + [f"{channel} (refused)" for channel in refused]
    if unknown:
        summary = f"could not ask Slack about {', '.join(unknown)}; Folio refuses there until it can"
        return Check(PART, "warn", summary, "invite Folio to the channel, or grant channels:read / groups:read", facts)
    if not shared:
        return Check(PART, "ok", f"none of the {len(policy.channels)} connected channels is shared outside", "", facts)
    fix = "Folio does not answer in a channel shared outside unless its rule says `external: allow`" if refused else ""
    return Check(PART, "warn" if refused else "ok", "shared outside the organisation: " + ", ".join(parts), fix, facts)
