"""Slack Connect: is a channel shared with another organisation, and is a person one of ours? Asked of Slack, cached
in Redis for every replica.

    {prefix}:shared:{team}:{channel}   "1" when conversations.info says is_ext_shared, "0" when not (FOLIO_ACCESS_TTL)
    {prefix}:person:{team}:{user}      "1" when users.info says the person belongs to another organisation, "0" if not

`channel_shared` / `channel_unshared` events drop a channel's entry, so the next turn asks Slack again. A lookup
that fails raises AccessUnavailable (fail closed: no answer from internal documents on a guess).

Redis Cluster (issue 23): one key per command; no hash tag is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.errors import AccessUnavailable
from bot.store import redis_errors
from bot.store.scripts import AnyRedis

_UNREACHABLE = (SlackClientError, aiohttp.ClientError, TimeoutError)


def shared_outside(channel: dict[str, Any]) -> bool:
    """Whether Slack's channel object says the channel is shared with another organisation (`is_org_shared` alone
    is sharing between the workspaces of one Enterprise Grid organisation: not outside)."""
    return bool(channel.get("is_ext_shared") or channel.get("is_pending_ext_shared"))


def of_another_organisation(user: dict[str, Any], *, home_team: str, home_enterprise: str | None) -> bool:
    """Whether Slack's user object is a person of another organisation than the installing workspace's."""
    if user.get("team_id") == home_team:
        return False
    enterprise = (user.get("enterprise_user") or {}).get("enterprise_id")
    return not (home_enterprise and enterprise == home_enterprise)


class Organisation:
    """Which channels are shared outside the organisation, and who is not of it; cached in Redis with a TTL."""

    def __init__(self, redis: AnyRedis, slack: AsyncWebClient, *, prefix: str, ttl: float) -> None:
        self._redis = redis
        self._slack = slack
        self._prefix = prefix
        self._ttl = max(1, int(ttl))
        self._home: tuple[str, str | None] | None = None  # the bot token's (team, enterprise), asked once

    async def shared_outside(self, team: str, channel: str) -> bool:
        """Whether `channel` is shared with another organisation (conversations.info, cached)."""
        return await self._shared(team, channel, await self._get(self._shared_key(team, channel)))

    async def is_outsider(self, team: str, user: str, *, user_team: str | None = None) -> bool:
        """Whether `user` belongs to another organisation: the event's `user_team` where it settles it (the
        installing workspace, or another one outside an Enterprise Grid organisation), else users.info (cached)."""
        settled = await self._settled_by_event(user_team)
        if settled is not None:
            return settled
        return await self._outsider(team, user, await self._get(self._person_key(team, user)))

    async def refusal_in_channel(
        self, team: str, channel: str, user: str, *, user_team: str | None = None
    ) -> str | None:
        """A turn's two checks in a channel, in this order: "shared" when the channel is shared outside the
        organisation, else "outsider" when the person is of another organisation, else None. Their cached answers
        are read in one round trip (a turn makes both; one key per command, any Cluster slot)."""
        shared_key, person_key = self._shared_key(team, channel), self._person_key(team, user)
        async with redis_errors():
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.get(shared_key)
                pipe.get(person_key)
                shared, person = (_flag(raw) for raw in await pipe.execute())
        if await self._shared(team, channel, shared):
            return "shared"
        settled = await self._settled_by_event(user_team)
        outsider = settled if settled is not None else await self._outsider(team, user, person)
        return "outsider" if outsider else None

    async def _shared(self, team: str, channel: str, cached: bool | None) -> bool:
        if cached is not None:
            return cached
        info = await self._ask(lambda: self._slack.conversations_info(channel=channel))
        outside = shared_outside(info.get("channel") or {})
        await self._put(self._shared_key(team, channel), outside)
        return outside

    async def _settled_by_event(self, user_team: str | None) -> bool | None:
        """What the event's `user_team` settles alone (None: it does not): the installing workspace is inside;
        without a Grid organisation, any other workspace is outside."""
        home_team, home_enterprise = await self.home()
        if user_team is not None and user_team == home_team:
            return False
        if user_team is not None and home_enterprise is None:
            return True
        return None

    async def _outsider(self, team: str, user: str, cached: bool | None) -> bool:
        """users.info's answer for `user`, unless the cache has it."""
        if cached is not None:
            return cached
        home_team, home_enterprise = await self.home()
        found = await self._ask(lambda: self._slack.users_info(user=user))
        outsider = of_another_organisation(
            found.get("user") or {}, home_team=home_team, home_enterprise=home_enterprise
        )
        await self._put(self._person_key(team, user), outsider)
        return outsider

    def _shared_key(self, team: str, channel: str) -> str:
        return f"{self._prefix}:shared:{team}:{channel}"

    def _person_key(self, team: str, user: str) -> str:
        return f"{self._prefix}:person:{team}:{user}"

    async def forget_channel(self, team: str, channel: str) -> None:
        """The channel was shared or unshared: ask Slack again on its next turn."""
        async with redis_errors():
            await self._redis.delete(f"{self._prefix}:shared:{team}:{channel}")

    async def home(self) -> tuple[str, str | None]:
        """The installing workspace and its Enterprise Grid organisation, if any (auth.test)."""
        if self._home is None:
            found = await self._ask(self._slack.auth_test)
            self._home = (str(found["team_id"]), found.get("enterprise_id") or None)
        return self._home

    async def _ask(self, call: Callable[[], Any]) -> Any:
        try:
            return await call()
        except _UNREACHABLE as exc:
            raise AccessUnavailable(messages.SHARING_UNKNOWN) from exc

    async def _get(self, key: str) -> bool | None:
        async with redis_errors():
            return _flag(await self._redis.get(key))

    async def _put(self, key: str, value: bool) -> None:
        async with redis_errors():
            await self._redis.set(key, "1" if value else "0", ex=self._ttl)


def _flag(raw: bytes | str | None) -> bool | None:
    return None if raw is None else raw in (b"1", "1")
