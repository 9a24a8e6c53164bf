"""Slack Connect: who and where Folio answers at all, decided in the turn before the scope (and any model call).

    a channel shared with another organisation   refused, unless the channel's rule says `external: allow`
    a person of another organisation, anywhere   refused, unless the channel's rule says `external: allow`, or
                                                 (in a DM) `access: users:` names them: then only those containers

A refusal is `Refused` (one sentence in the thread); a lookup Slack cannot answer is `AccessUnavailable`: the turn
fails closed, never answering from internal documents on a guess. Channels whose rule allows external people need
no lookup at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from bot import messages
from bot.config import ChannelPolicy
from bot.config.channels import narrow
from bot.errors import Refused
from bot.models import Scope, Tag
from bot.turns.request import TurnRequest
from bot.turns.scope import Scopes, TurnScope


class Boundary(Protocol):
    """What Slack says about sharing (`bot.access.Organisation`)."""

    async def shared_outside(self, team: str, channel: str) -> bool: ...

    async def is_outsider(self, team: str, user: str, *, user_team: str | None = None) -> bool: ...

    async def refusal_in_channel(
        self, team: str, channel: str, user: str, *, user_team: str | None = None
    ) -> str | None: ...


@dataclass(frozen=True)
class SharedSpaces:
    """`Scopes` that first refuse channels shared outside the organisation and people of other organisations."""

    inner: Scopes
    policy: Callable[[], ChannelPolicy]
    organisation: Boundary

    async def resolve(self, request: TurnRequest, *, narrowing: tuple[Tag, ...], strict: bool = False) -> TurnScope:
        policy, thread = self.policy(), request.thread
        if not request.is_dm:
            rule = policy.rule_for(thread.channel)  # NotConnected, as the inner scope would say
            if rule.external != "allow":  # both checks' cached answers in one round trip
                refusal = await self.organisation.refusal_in_channel(
                    thread.team, thread.channel, request.user, user_team=request.asker_team
                )
                if refusal == "shared":
                    raise Refused(messages.SHARED_CHANNEL_REFUSED)
                if refusal == "outsider":
                    raise Refused(messages.OUTSIDER_REFUSED)
            return await self.inner.resolve(request, narrowing=narrowing, strict=strict)
        if not await self._outsider(request):
            return await self.inner.resolve(request, narrowing=narrowing, strict=strict)
        named = policy.access.users.get(request.user) if policy.access is not None else None
        if named:  # only what the rule names for them: no groups of ours, no default
            return TurnScope(
                narrow(Scope(containers=named), narrowing, allowed_keys=policy.tag_keys), messages.BASIS_NAMED
            )
        if policy.access is None and policy.dm is not None and policy.dm.external == "allow":
            return await self.inner.resolve(request, narrowing=narrowing, strict=strict)
        raise Refused(messages.OUTSIDER_REFUSED)

    async def _outsider(self, request: TurnRequest) -> bool:
        return await self.organisation.is_outsider(request.thread.team, request.user, user_team=request.asker_team)
