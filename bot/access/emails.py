"""Who a signed-in e-mail address is in Slack: users.lookupByEmail, cached in Redis for every replica.

    {prefix}:email:{sha256 of the address}   {"at": when Slack said it, "value": {"user": ..., "team": ...} or null}

Agents reach Folio as the person their identity provider signed in (bot.mcp); Folio's rules are written for Slack
people, so the address is looked up once per FOLIO_ACCESS_TTL. The address is kept hashed (a cache of Redis is not
a staff directory). An address Slack does not know, or a deactivated account or a bot, is nobody: None, cached like
an answer. When Slack cannot be asked, an answer up to a day older is used; with none, AccessUnavailable (nobody is
let in on a guess).

Needs the bot scope `users:read.email`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.access.membership import KEEP_STALE, SLACK_PATIENCE
from bot.errors import AccessUnavailable
from bot.store import redis_errors

log = logging.getLogger(__name__)

_UNREACHABLE = (SlackClientError, aiohttp.ClientError, TimeoutError)
_NOBODY = {"users_not_found", "user_not_found"}  # Slack's definite "no such person": an answer, not an outage


@dataclass(frozen=True)
class SlackPerson:
    """A Slack account found by e-mail: its user ID and home workspace."""

    user: str
    team: str


def person_of(user: Any) -> SlackPerson | None:
    """The person in Slack's user object; None for a deactivated account, a bot, or an object without an ID."""
    if not isinstance(user, dict) or user.get("deleted") or user.get("is_bot") or user.get("is_app_user"):
        return None
    user_id, team = user.get("id"), user.get("team_id")
    if not isinstance(user_id, str) or not user_id or not isinstance(team, str):
        return None
    return SlackPerson(user_id, team)


class People:
    """E-mail address -> Slack person, cached in Redis with a TTL."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        slack: AsyncWebClient,
        *,
        prefix: str,
        ttl: float,
        clock: Callable[[], float] = time.time,
        patience: float = SLACK_PATIENCE,
    ) -> None:
        self._redis, self._slack, self._prefix = redis, slack, prefix
        self._ttl, self._clock, self._patience = ttl, clock, patience

    async def by_email(self, email: str) -> SlackPerson | None:
        """The Slack person with this address, or None."""
        address = email.strip().lower()
        if "@" not in address or len(address) > 320:
            return None
        key = f"{self._prefix}:email:{hashlib.sha256(address.encode()).hexdigest()}"
        cached = await self._get(key)
        if cached is not None and self._clock() - cached[0] < self._ttl:
            return cached[1]
        try:
            found = await self._ask(address)
        except AccessUnavailable:
            if cached is not None:
                log.warning(
                    "Slack did not answer users.lookupByEmail; using the answer of %.0f s ago",
                    self._clock() - cached[0],
                )
                return cached[1]
            raise
        await self._put(key, found)
        return found

    async def _ask(self, address: str) -> SlackPerson | None:
        try:
            async with asyncio.timeout(self._patience):
                response = await self._slack.users_lookupByEmail(email=address)
        except SlackApiError as exc:
            error = exc.response.get("error")
            if error in _NOBODY:
                return None
            log.warning("users.lookupByEmail failed: %s (the bot needs the scope users:read.email)", error)
            raise AccessUnavailable(messages.ACCESS_UNKNOWN) from exc
        except _UNREACHABLE as exc:
            log.warning("users.lookupByEmail could not reach Slack: %s", type(exc).__name__)
            raise AccessUnavailable(messages.ACCESS_UNKNOWN) from exc
        return person_of(response.get("user"))

    async def _get(self, key: str) -> tuple[float, SlackPerson | None] | None:
        async with redis_errors():
            raw = await self._redis.get(key)
        if raw is None:
            return None
        try:
            entry = json.loads(raw)
            value = entry["value"]
            return float(entry["at"]), SlackPerson(**value) if value is not None else None
        except (ValueError, KeyError, TypeError):
            return None

    async def _put(self, key: str, person: SlackPerson | None) -> None:
        value = {"user": person.user, "team": person.team} if person is not None else None
        async with redis_errors():
            await self._redis.set(
                key, json.dumps({"at": self._clock(), "value": value}), ex=int(self._ttl + KEEP_STALE)
            )
