"""What an agent may search for its person: exactly what that person may search in a direct message with Folio.

    scope = await scope_for(mcp, request)   # Refused for a person of another organisation; NotConnected for nobody

The person's `access:` rules (their groups', their own and the default containers), else today's `dm:` rule; a
person of another organisation gets only what `access: users:` names for them, or nothing (`SharedSpaces`, as in
Slack). The channel a person views beside Slack's assistant plays no part: an agent is not beside any channel.
Tag filters only narrow what this gives (`narrow` refuses a filter that would widen it).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot import messages
from bot.access import Access
from bot.config import ChannelPolicy
from bot.config.channels import narrow
from bot.mcp.identity import Person
from bot.mcp.services import McpFolio
from bot.models import Scope, Tag
from bot.store import ThreadKey
from bot.turns import TurnRequest, TurnScope
from bot.turns.boundary import SharedSpaces

MCP_CHANNEL = "mcp"  # the "channel" of agents' turns: usage by channel and traces name it
SURFACE = "mcp"


@dataclass(frozen=True)
class PersonScopes:
    """A person's DM scope: their `access:` grant, else the `dm:` rule (`bot.turns.scope.Scopes`)."""

    policy: Callable[[], ChannelPolicy]
    access: Access

    async def resolve(self, request: TurnRequest, *, narrowing: tuple[Tag, ...], strict: bool = False) -> TurnScope:
        policy = self.policy()
        grant = await self.access.grant(policy, team=request.thread.team, user=request.user)
        if grant is not None:
            return TurnScope(narrow(grant.scope(), narrowing, allowed_keys=policy.tag_keys), messages.BASIS_ACCESS)
        return TurnScope(policy.scope_for(request.thread.channel, is_dm=True, tags=narrowing), messages.BASIS_DM)


def scopes(mcp: McpFolio) -> SharedSpaces:
    """The scopes of agents' requests: outsiders refused first, as in a Slack DM."""
    return SharedSpaces(PersonScopes(mcp.policy, mcp.access), mcp.policy, mcp.access.organisation)


async def mcp_request(mcp: McpFolio, person: Person, *, question: str = "", tags: tuple[Tag, ...] = ()) -> TurnRequest:
    """A request of `person` through an agent: a new thread each time (the server keeps no session)."""
    thread_ts = f"{int(time.time())}.{secrets.randbelow(1_000_000):06d}"
    return TurnRequest(
        thread=ThreadKey(team=await mcp.team(), channel=MCP_CHANNEL, thread_ts=thread_ts),
        question=question,
        user=person.user,
        is_dm=True,
        tags=tags,
        asker_team=person.team or None,
        surface=SURFACE,
    )


async def scope_for(mcp: McpFolio, request: TurnRequest) -> Scope:
    """The scope `request`'s person may search, narrowed by its tags."""
    return (await scopes(mcp).resolve(request, narrowing=request.tags)).scope
