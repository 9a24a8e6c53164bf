"""What a person may search in a direct message or Slack's assistant container, decided on every turn.

    in the assistant beside a channel  that channel's rule, when the person is a member and the channel is connected
    otherwise, with an `access:` section  the asker's containers (their groups', their own and the default)
    otherwise                          None: today's `dm:` rule decides, unchanged (`bot.turns.scope`)

Which channel a person is viewing comes from Slack's events: `assistant_thread_started` and
`assistant_thread_context_changed` name it per assistant thread (the assistant_view experience),
`app_context_changed` per person (agent_view). It is kept in Redis next to the membership cache:

    {prefix}:thread:{team}:{channel}:{thread_ts}   the assistant thread's person and the channel they view
    {prefix}:titled:{team}:{channel}:{thread_ts}   set once the first question has named the thread
    {prefix}:greeting:{team}:{channel}:{thread_ts} the ts of Folio's greeting in the assistant thread
    {prefix}:viewing:{team}:{user}                 the channel a person views beside the agent (agent_view)

Redis Cluster (issue 23): one key per command (`forget_thread` pipelines them without a transaction: a greeting
written between its GET and DEL is a greeting that was never shown yet). The membership and organisation caches
(bot.access.membership, bot.access.organisation) are one key per command too: no hash tag is needed.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from bot import messages
from bot.access.membership import Memberships
from bot.access.organisation import Organisation
from bot.access.rules import Grant, grant_for
from bot.config import ChannelPolicy
from bot.errors import AccessUnavailable, NotConnected
from bot.models import Scope, is_direct_message
from bot.store import THIRTY_DAYS, ThreadKey, redis_errors
from bot.store.scripts import AnyRedis

log = logging.getLogger(__name__)

VIEWING_TTL = 24 * 3600  # a person's agent_view context older than this is not what they are looking at


@dataclass(frozen=True)
class ScopeChoice:
    """The scope of one turn in a DM or the assistant, and why (said in the answer's footer)."""

    scope: Scope
    basis: str


@dataclass(frozen=True)
class AssistantThread:
    """An assistant thread as Slack described it: whose it is and which channel they view beside it."""

    user: str
    viewing: str | None = None


class Access:
    """Decides DM and assistant scopes from the policy, Slack membership and the assistant's context."""

    def __init__(self, redis: AnyRedis, memberships: Memberships, organisation: Organisation, *, prefix: str) -> None:
        self._redis = redis
        self.memberships = memberships
        self.organisation = organisation  # Slack Connect: shared channels, people of other organisations
        self._prefix = prefix

    async def grant(self, policy: ChannelPolicy, *, team: str, user: str) -> Grant | None:
        """What `user` may search in a DM under the `access:` rules; None when the policy has none."""
        rules = policy.access
        if rules is None:
            return None
        groups = await self.memberships.groups_of(team, user, list(rules.groups))
        return grant_for(rules, user=user, groups=groups)

    async def team(self) -> str:
        """The workspace the bot token belongs to (the cache's keys name it, as events do)."""
        return await self.memberships.team()

    async def unknown_groups(self, policy: ChannelPolicy) -> list[str]:
        """The policy's group handles Slack does not know; logged by name at start (their rules give nobody
        anything). Empty when Slack cannot be asked now: lookups will say so when it matters."""
        if policy.access is None or not policy.access.groups:
            return []
        try:
            ids = await self.memberships.group_ids(await self.team(), list(policy.access.groups))
        except AccessUnavailable as exc:  # missing_scope (no usergroups:read) is for an admin to fix, not to wait out
            log.warning("could not check the policy's user group handles: %s from Slack", exc.__cause__)
            return []
        unknown = [key for key, group in ids.items() if group is None]
        if unknown:
            log.warning(messages.unknown_groups(unknown))
        return unknown

    async def choose(self, policy: ChannelPolicy, *, thread: ThreadKey, user: str) -> ScopeChoice | None:
        """The scope of a DM turn asked by `user` before the thread's `/ask` filters narrow it (`bot.turns.scope`);
        None when today's `dm:` rule decides unchanged."""
        viewing = await self.viewing(thread, user)
        if viewing is not None and await self._may_search_channel(policy, thread.team, viewing, user):
            return ScopeChoice(policy.scope_for(viewing), messages.basis_viewed(viewing))
        grant = await self.grant(policy, team=thread.team, user=user)
        if grant is not None:
            return ScopeChoice(grant.scope(), messages.BASIS_ACCESS)
        if viewing is not None:  # in the assistant, beside a channel it may not search: say so
            return ScopeChoice(policy.scope_for(thread.channel, is_dm=True), messages.BASIS_DM)
        return None

    async def _may_search_channel(self, policy: ChannelPolicy, team: str, channel: str, user: str) -> bool:
        if is_direct_message(channel):  # a DM or nothing: there is no channel rule to borrow
            return False
        try:
            policy.rule_for(channel)
        except NotConnected:
            return False
        return await self.memberships.in_channel(team, channel, user)

    # --- the assistant's context ----------------------------------------------------------------------------------
    async def thread_started(self, thread: ThreadKey, *, user: str, viewing: str | None) -> None:
        """Remember an assistant thread (assistant_thread_started)."""
        await self._save(thread, AssistantThread(user=user, viewing=viewing))

    async def thread_viewing(self, thread: ThreadKey, *, user: str, viewing: str | None) -> None:
        """The person now views another channel beside the thread (assistant_thread_context_changed)."""
        await self._save(thread, AssistantThread(user=user, viewing=viewing))

    async def person_viewing(self, team: str, user: str, channel: str | None) -> None:
        """The person views another channel beside the agent (app_context_changed, agent_view)."""
        key = self._key(f"viewing:{team}:{user}")
        async with redis_errors():
            if channel is None:
                await self._redis.delete(key)
            else:
                await self._redis.set(key, channel, ex=VIEWING_TTL)

    async def viewing(self, thread: ThreadKey, user: str) -> str | None:
        """The channel `user` views beside this DM thread: the assistant thread's context, else their own."""
        known = await self.assistant_thread(thread)
        if known is not None:
            return known.viewing if known.user == user else None
        async with redis_errors():
            raw = await self._redis.get(self._key(f"viewing:{thread.team}:{user}"))
        return raw.decode() if isinstance(raw, bytes) else raw

    async def assistant_thread(self, thread: ThreadKey) -> AssistantThread | None:
        """The assistant thread's record, or None for a DM thread Slack never announced."""
        async with redis_errors():
            raw = await self._redis.get(self._thread_key(thread))
        if raw is None:
            return None
        try:
            return AssistantThread(**json.loads(raw))
        except (ValueError, TypeError):
            log.warning("unreadable assistant thread record %s", thread)
            return None

    async def claim_title(self, thread: ThreadKey, user: str) -> bool:
        """True once per assistant thread of `user`: the first question names the thread."""
        known = await self.assistant_thread(thread)
        if known is None or known.user != user:
            return False
        async with redis_errors():
            return bool(await self._redis.set(self._key(f"titled:{thread}"), "1", nx=True, ex=THIRTY_DAYS))

    async def greeted(self, thread: ThreadKey, ts: str) -> None:
        """Remember the greeting's message, so deleting the conversation removes it too."""
        async with redis_errors():
            await self._redis.set(self._key(f"greeting:{thread}"), ts, ex=THIRTY_DAYS)

    async def forget_thread(self, thread: ThreadKey) -> tuple[bool, str | None]:
        """The conversation is deleted: drop every key this thread has here. Returns (whether it was an assistant
        thread Folio titled, the greeting's ts), for the caller to clear them in Slack."""
        keys = [self._thread_key(thread), self._key(f"titled:{thread}"), self._key(f"greeting:{thread}")]
        async with redis_errors():
            async with self._redis.pipeline(transaction=False) as pipe:  # three slots: see the module docstring
                pipe.exists(keys[1])
                pipe.get(keys[2])
                for key in keys:
                    pipe.delete(key)
                titled, greeting, *_ = await pipe.execute()
        return bool(titled), greeting.decode() if isinstance(greeting, bytes) else greeting

    async def _save(self, thread: ThreadKey, record: AssistantThread) -> None:
        raw = json.dumps({"user": record.user, "viewing": record.viewing})
        async with redis_errors():
            await self._redis.set(self._thread_key(thread), raw, ex=THIRTY_DAYS)

    def _thread_key(self, thread: ThreadKey) -> str:
        return self._key(f"thread:{thread}")

    def _key(self, name: str) -> str:
        return f"{self._prefix}:{name}"
