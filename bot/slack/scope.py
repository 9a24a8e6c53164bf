"""Which documents a turn may search: resolved once per turn, from the policy, never from the model or the words.

Every Slack surface (mention, DM, `/ask`, a follow-up, a button) goes through `scope_for_turn`.
"""

from __future__ import annotations

from bot import messages
from bot.config import ChannelPolicy
from bot.errors import NotConnected
from bot.models import Conversation, Scope, Tag


def new_thread_scope(policy: ChannelPolicy, *, channel: str, is_dm: bool, tags: tuple[Tag, ...]) -> Scope:
    """The scope a new thread starts with: the channel's rule (or the DM rule), narrowed by `/ask` filters."""
    return policy.scope_for(channel, is_dm=is_dm, tags=tags)


def scope_for_turn(policy: ChannelPolicy, *, channel: str, is_dm: bool, conversation: Conversation) -> Scope:
    """The scope this turn searches. A thread keeps its scope, unless an admin has since disconnected the channel
    or moved it to other documents (then NotConnected says so)."""
    rule = policy.rule_for(channel, is_dm=is_dm)
    if (rule.container,) != conversation.scope.containers:
        raise NotConnected(messages.SCOPE_CHANGED)
    return conversation.scope
