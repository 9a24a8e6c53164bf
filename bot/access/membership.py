"""Who is in which Slack user group, and who is in which channel: asked of Slack, cached in Redis for every replica.

    {prefix}:handles:{team}                   handle -> group ID, from usergroups.list
    {prefix}:group:{team}:{group}             the group's members, from usergroups.users.list
    {prefix}:channel:{team}:{channel}:{user}  whether the user is in the channel, from conversations.members
    {prefix}:open:{team}:{channel}            whether the whole workspace can read it, from conversations.info

Each entry records when Slack gave it. Younger than FOLIO_ACCESS_TTL, it is used as it stands; older, Slack is asked
again. When Slack cannot be asked (or takes longer than SLACK_PATIENCE, e.g. waiting out a rate limit's Retry-After
while the person waits for an answer), an entry up to a day older is used instead (and logged); with none, a group
lookup raises AccessUnavailable rather than guess, a channel lookup answers "not a member", and `can_read` (may this
person read this conversation?) raises AccessUnavailable, for its caller to say so.
`subteam_members_changed` and `subteam_updated` events refresh a cached group at once. Slack's answers only ever say
whether a person is in a group the policy names: they can switch an admin's rule on or off, never add a container.

Redis Cluster (issue 23): every command touches one key, and no two keys change together, so no hash tag is needed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.access.organisation import shared_outside
from bot.errors import AccessUnavailable
from bot.store import redis_errors
from bot.store.scripts import AnyRedis

log = logging.getLogger(__name__)

KEEP_STALE = 24 * 3600  # seconds an answer is kept beyond its TTL, for when Slack cannot be asked
SLACK_PATIENCE = 4.0  # seconds one lookup may take while a turn waits (the client would sleep out each Retry-After)
_PAGE = 1000  # conversations.members' largest page
MAX_PAGES = 50  # pages one channel lookup reads (50,000 members): past it, Slack is answering in circles
_UNREACHABLE = (SlackClientError, aiohttp.ClientError, TimeoutError)  # SlackApiError is a SlackClientError
_NO_SUCH_GROUP = {"no_such_subteam"}  # Slack's definite "no such group": no members, not an outage


class SlackUnreachable(Exception):
    """Slack did not answer the question (outage, rate limit after retries, missing scope)."""


class SlackMalformed(SlackUnreachable):
    """Slack's answer cannot be read as one: a list that is not a list, a cursor that repeats, pages without end.
    Never cached; like an outage, the last good answer is used, or nobody is let in."""


def is_open(channel: dict[str, Any]) -> bool:
    """Whether Slack's channel object is a public channel everyone in the workspace can read: said to be not
    private (a missing flag is not taken for public), not a DM or group DM, and not shared with another
    organisation (whether a Slack Connect channel is public is each organisation's setting: Folio does not guess)."""
    if channel.get("is_private") is not False or channel.get("is_im") or channel.get("is_mpim"):
        return False
    return not shared_outside(channel)


def is_group_id(key: str) -> bool:
    """Policy group keys are handles (finance-team) or IDs (S0123ABCD); config validated them."""
    return key[:1] == "S" and key.isupper()


class Memberships:
    """Slack user group and channel membership, cached in Redis with a TTL."""

    def __init__(
        self,
        redis: AnyRedis,
        slack: AsyncWebClient,
        *,
        prefix: str,
        ttl: float,
        clock: Callable[[], float] = time.time,
        patience: float = SLACK_PATIENCE,
    ) -> None:
        self._redis = redis
        self._slack = slack
        self._prefix = prefix
        self._ttl = ttl
        self._clock = clock
        self._patience = patience

    async def team(self) -> str:
        """The bot token's workspace ID (auth.test), for commands that do not come with an event."""
        try:
            return str((await self._slack.auth_test())["team_id"])
        except _UNREACHABLE as exc:
            raise AccessUnavailable(messages.ACCESS_UNKNOWN) from exc

    # --- user groups --------------------------------------------------------------------------------------------
    async def groups_of(self, team: str, user: str, groups: Collection[str]) -> frozenset[str]:
        """Which of `groups` (policy keys: handles or IDs) `user` is in; AccessUnavailable when Slack cannot say
        and nothing is cached."""
        if not groups:
            return frozenset()
        ids = await self.group_ids(team, groups)
        known = {key: group for key in groups if (group := ids.get(key))}
        members = await asyncio.gather(*(self.members(team, group) for group in known.values()))
        return frozenset(key for key, users in zip(known, members, strict=True) if user in users)

    async def group_ids(self, team: str, groups: Iterable[str]) -> dict[str, str | None]:
        """Policy key -> Slack group ID; None for a handle Slack does not know (that rule gives nobody anything)."""
        keys = list(groups)
        handles = [key for key in keys if not is_group_id(key)]
        known = await self._cached(f"handles:{team}", lambda: self._fetch_handles(team)) if handles else {}
        return {key: key if is_group_id(key) else known.get(key) for key in keys}

    async def members(self, team: str, group_id: str) -> frozenset[str]:
        """The user IDs in one group."""
        return frozenset(await self._cached(f"group:{team}:{group_id}", lambda: self._fetch_members(group_id)))

    async def refresh_group(self, team: str, group_id: str, *, removed: Iterable[str] = ()) -> None:
        """A group changed (subteam event): ask Slack again now; when it cannot answer, at least drop the people
        the event says were removed, so a removal never waits for the TTL. A group no lookup has cached costs no
        call (a directory sync sends events for every group; the next lookup asks Slack anyway)."""
        key = f"group:{team}:{group_id}"
        entry = await self._get(key)
        if entry is None:
            return
        try:
            await self._put(key, await self._fetch_members(group_id))
            return
        except SlackUnreachable:
            log.warning("could not refresh user group %s; applying the event's removals", group_id)
        at, users = entry
        await self._put(key, sorted(set(users) - set(removed)), at=at)

    async def disable_group(self, team: str, group_id: str) -> None:
        """A disabled group gives nobody anything."""
        await self._put(f"group:{team}:{group_id}", [])

    async def forget_handles(self, team: str) -> None:
        """A group was renamed or disabled: ask usergroups.list again on the next lookup."""
        async with redis_errors():
            await self._redis.delete(self._key(f"handles:{team}"))

    async def _fetch_handles(self, team: str) -> dict[str, str]:
        response = await self._ask(lambda: self._slack.usergroups_list(include_disabled=False))
        groups = _listed(response, "usergroups.list", "usergroups", dict)
        return {str(group["handle"]): str(group["id"]) for group in groups if group.get("handle") and group.get("id")}

    async def _fetch_members(self, group_id: str) -> list[str]:
        try:
            response = await self._ask(lambda: self._slack.usergroups_users_list(usergroup=group_id))
        except SlackUnreachable as exc:
            if isinstance(exc.__cause__, SlackApiError) and exc.__cause__.response.get("error") in _NO_SUCH_GROUP:
                return []
            raise
        return _listed(response, "usergroups.users.list", "users", str)

    # --- channels -----------------------------------------------------------------------------------------------
    async def in_channel(self, team: str, channel: str, user: str) -> bool:
        """Whether `user` is a member of `channel`; False when Slack cannot say and nothing is cached."""
        try:
            return await self._member(team, channel, user)
        except AccessUnavailable:
            return False

    async def can_read(self, team: str, channel: str, user: str) -> bool:
        """Whether `user` can read `channel` in Slack: any public channel of the workspace; a private channel, a
        group DM, a DM or a channel shared with another organisation only as a member. AccessUnavailable when
        Slack cannot say and nothing is cached (the caller hides what it would have shown)."""
        if await self._cached(f"open:{team}:{channel}", lambda: self._fetch_open(channel)):
            return True
        return await self._member(team, channel, user)

    async def _member(self, team: str, channel: str, user: str) -> bool:
        return bool(await self._cached(f"channel:{team}:{channel}:{user}", lambda: self._find(channel, user)))

    async def _fetch_open(self, channel: str) -> bool:
        response = await self._ask(lambda: self._slack.conversations_info(channel=channel))
        info = response.get("channel")
        if not isinstance(info, dict):
            raise SlackMalformed(f"conversations.info answered no channel object for {channel}")
        return is_open(info)

    async def _find(self, channel: str, user: str) -> bool:
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            response = await self._ask(
                lambda: self._slack.conversations_members(channel=channel, cursor=cursor, limit=_PAGE)
            )
            if user in _listed(response, "conversations.members", "members", str):
                return True
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None:
                return False
            if not isinstance(cursor, str) or cursor in seen:
                raise SlackMalformed(f"conversations.members gave the cursor {str(cursor)[:40]!r} twice")
            seen.add(cursor)
        raise SlackMalformed(f"conversations.members had more than {MAX_PAGES} pages of {_PAGE} for {channel}")

    # --- the cache ----------------------------------------------------------------------------------------------
    async def _cached(self, name: str, fetch: Callable[[], Awaitable[Any]]) -> Any:
        entry = await self._get(name)
        if entry is not None and self._clock() - entry[0] < self._ttl:
            return entry[1]
        try:
            value = await fetch()
        except SlackUnreachable as exc:
            if entry is not None:
                log.warning(
                    "Slack did not answer for %s (%s); using the answer of %.0f s ago",
                    name,
                    exc,
                    self._clock() - entry[0],
                )
                return entry[1]
            log.warning("Slack did not answer for %s (%s) and nothing is cached: refusing", name, exc)
            raise AccessUnavailable(messages.ACCESS_UNKNOWN) from exc
        await self._put(name, value)
        return value

    async def _ask(self, call: Callable[[], Awaitable[Any]]) -> Any:
        try:
            async with asyncio.timeout(self._patience):
                return await call()
        except _UNREACHABLE as exc:
            error = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
            raise SlackUnreachable(error) from exc

    def _key(self, name: str) -> str:
        return f"{self._prefix}:{name}"

    async def _get(self, name: str) -> tuple[float, Any] | None:
        async with redis_errors():
            raw = await self._redis.get(self._key(name))
        if raw is None:
            return None
        try:
            entry = json.loads(raw)
            return float(entry["at"]), entry["value"]
        except (ValueError, KeyError, TypeError):
            log.warning("unreadable access cache entry %s; asking Slack again", name)
            return None

    async def _put(self, name: str, value: Any, *, at: float | None = None) -> None:
        entry = json.dumps({"at": self._clock() if at is None else at, "value": value})
        async with redis_errors():
            await self._redis.set(self._key(name), entry, ex=int(self._ttl + KEEP_STALE))


def _listed(response: Any, method: str, field: str, kind: type) -> list[Any]:
    """`response[field]`, a list of `kind` (absent: empty); SlackMalformed when it is anything else (a string of
    IDs would otherwise be searched as a substring)."""
    value = response.get(field)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, kind) for item in value):
        raise SlackMalformed(f"{method} answered {field} that is not a list of {kind.__name__}: {str(value)[:60]!r}")
    return value
