"""Which documents a turn may search: resolved for every turn, from today's policy, never from the model or the words.

Every Slack surface (mention, DM, `/ask`, a follow-up, a button) goes through `scope_for_turn`, once per turn: after
the thread's lock (`PolicyScopes`), or for an `/ask` in the turn's first step before its thread exists (`open_turn`,
bot.turns.turn); the terminal searches the scope named on its command line (`FixedScope`). A thread stores only its
own `/ask` filters (`Conversation.narrowing`); the containers and default tags come from the policy as it is now: the
channel's rule in a channel, and in DMs and the assistant container the person asking this turn (`bot.access`) where
the policy has an `access:` section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from bot.config import ChannelPolicy
from bot.config.channels import narrow
from bot.errors import InvalidInput
from bot.models import Scope, Tag
from bot.store import ThreadKey
from bot.turns.request import TurnRequest, TurnScope

if TYPE_CHECKING:  # Slack's membership lookups load only where a Slack turn runs
    from bot.access import Access


__all__ = ["FixedScope", "PolicyScopes", "Scopes", "TurnScope", "scope_for_turn"]


async def scope_for_turn(
    policy: ChannelPolicy,
    access: Access | None,
    *,
    thread: ThreadKey,
    user: str,
    is_dm: bool,
    narrowing: tuple[Tag, ...],
    strict: bool = False,
) -> TurnScope:
    """The scope this turn searches: in a DM or the assistant, the asker's (the channel they view beside the
    assistant, or their `access:` containers); else today's rule for the channel (NotConnected when it has none any
    more); either narrowed by those of the thread's own filters that it still allows, or with `strict` (filters typed
    for this very turn) by all of them, InvalidInput naming one it does not allow."""
    rule = await _rule(policy, access, thread=thread, user=user, is_dm=is_dm)
    kept = narrowing if strict else tuple(tag for tag in narrowing if _still_allowed(policy, rule.scope, tag))
    return TurnScope(narrow(rule.scope, kept, allowed_keys=policy.tag_keys), rule.basis)


async def _rule(
    policy: ChannelPolicy, access: Access | None, *, thread: ThreadKey, user: str, is_dm: bool
) -> TurnScope:
    """The scope before the thread's filters: the asker's in a DM or the assistant, else the channel's rule."""
    if is_dm and access is not None:
        chosen = await access.choose(policy, thread=thread, user=user)
        if chosen is not None:
            return TurnScope(chosen.scope, chosen.basis)
    return TurnScope(policy.scope_for(thread.channel, is_dm=is_dm))


def _still_allowed(policy: ChannelPolicy, rule: Scope, tag: Tag) -> bool:
    # A filter the policy no longer allows (its key was dropped, or the channel's defaults now exclude its value)
    # is left out: the policy of today decides, and the answer says that the scope changed.
    try:
        narrow(rule, (tag,), allowed_keys=policy.tag_keys)
    except InvalidInput:
        return False
    return True


class Scopes(Protocol):
    """Resolves the scope of a turn (called once per turn: after the thread's lock, or in `open_turn`)."""

    async def resolve(self, request: TurnRequest, *, narrowing: tuple[Tag, ...], strict: bool = False) -> TurnScope:
        """`narrowing`: the thread's filters; a stored one today's scope no longer allows is dropped, unless
        `strict` (typed for this very turn, as `/ask` filters are): then InvalidInput names it."""


@dataclass(frozen=True)
class PolicyScopes:
    """Today's channel policy, or the asker's access rules in DMs and the assistant (Slack)."""

    policy: Callable[[], ChannelPolicy]
    access: Access | None

    async def resolve(self, request: TurnRequest, *, narrowing: tuple[Tag, ...], strict: bool = False) -> TurnScope:
        return await scope_for_turn(
            self.policy(),
            self.access,
            thread=request.thread,
            user=request.user,
            is_dm=request.is_dm,
            narrowing=narrowing,
            strict=strict,
        )


@dataclass(frozen=True)
class FixedScope:
    """The scope named on the command line (the terminal)."""

    scope: Scope

    async def resolve(self, request: TurnRequest, *, narrowing: tuple[Tag, ...], strict: bool = False) -> TurnScope:
        return TurnScope(self.scope)
