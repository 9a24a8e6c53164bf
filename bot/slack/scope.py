"""Which documents a turn may search: resolved once per turn, from the policy, never from the model or the words.

Every Slack surface (mention, DM, `/ask`, a follow-up, a button) goes through `scope_for_turn`; DMs and the
assistant container first ask `asker_scope` (the person asking this turn decides, see `bot.access`).
"""

from __future__ import annotations

from bot import messages
from bot.access import Access, ScopeChoice
from bot.config import ChannelPolicy
from bot.errors import NotConnected
from bot.models import Conversation, Scope, Tag
from bot.store import ThreadKey


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


async def asker_scope(
    policy: ChannelPolicy, access: Access | None, *, thread: ThreadKey, user: str, is_dm: bool, tags: tuple[Tag, ...]
) -> ScopeChoice | None:
    """In a DM or the assistant container, the scope of the person asking this turn (the channel they view beside
    the assistant, or their `access:` containers narrowed by the thread's `/ask` tags), and why; None elsewhere and
    where today's `dm:` rule decides."""
    if not is_dm or access is None:
        return None
    return await access.choose(policy, thread=thread, user=user, tags=tags)
