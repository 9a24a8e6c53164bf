"""Which documents a turn may search: resolved for every turn, from today's policy, never from the model or the words.

Every Slack surface (mention, DM, `/ask`, a follow-up, a button) goes through `scope_for_turn`. A thread stores only
its own `/ask` filters (`Conversation.narrowing`); the container and default tags come from the policy as it is now.
"""

from __future__ import annotations

from bot.config import ChannelPolicy
from bot.config.channels import narrow
from bot.errors import InvalidInput
from bot.models import Conversation, Scope, Tag


def new_thread_scope(policy: ChannelPolicy, *, channel: str, is_dm: bool, tags: tuple[Tag, ...]) -> Scope:
    """The scope a new thread starts with: the channel's rule (or the DM rule), narrowed by `/ask` filters."""
    return policy.scope_for(channel, is_dm=is_dm, tags=tags)


def scope_for_turn(policy: ChannelPolicy, *, channel: str, is_dm: bool, conversation: Conversation) -> Scope:
    """The scope this turn searches: today's rule for the channel (NotConnected when it has none any more), narrowed
    by those of the thread's own filters that the rule still allows."""
    rule = policy.scope_for(channel, is_dm=is_dm)
    kept = tuple(tag for tag in conversation.narrowing if _still_allowed(policy, rule, tag))
    return narrow(rule, kept, allowed_keys=policy.tag_keys)


def _still_allowed(policy: ChannelPolicy, rule: Scope, tag: Tag) -> bool:
    # A filter the policy no longer allows (its key was dropped, or the channel's defaults now exclude its value)
    # is left out: the policy of today decides, and the answer says that the scope changed.
    try:
        narrow(rule, (tag,), allowed_keys=policy.tag_keys)
    except InvalidInput:
        return False
    return True
