"""Folio-issued access tokens: for service accounts and for `folio mcp` over stdio, one Slack person each.

    tokens = FolioTokens(redis, prefix=...)              # prefix: ConversationStore.keyspace("tokens")
    issued = await tokens.create(user="U123", team="T1", days=90, label="ci")   # the secret is shown once
    holder = await tokens.check(secret)                  # None: unknown, revoked or expired
    await tokens.revoke(token_id)

Only a SHA-256 digest of each token is kept, never the token: a copy of Redis lets nobody in. All tokens live in
one hash, `{prefix}` (field: the digest; value: the record as JSON), so every command touches one key (Redis
Cluster: one slot) and listing needs no scan. A token's id is the start of its digest: enough to name it in
`folio access token revoke`, useless to sign in with.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from bot.store.conversations import ConversationStore
from bot.store.errors import redis_errors

log = logging.getLogger(__name__)

TOKEN_PREFIX = "folio_"  # tells a Folio token from an identity provider's JWT at a glance (and to secret scanners)
ID_CHARS = 12  # hex characters of the digest that name a token
MAX_DAYS = 366


@dataclass(frozen=True, kw_only=True)
class TokenRecord:
    """One issued token as Redis keeps it (no secret in it)."""

    id: str
    user: str  # the Slack user ID the token acts as
    team: str  # that person's workspace
    created: float  # Unix time
    expires: float  # Unix time
    label: str = ""

    def expired(self, now: float) -> bool:
        return now >= self.expires


@dataclass(frozen=True)
class Issued:
    """A token just created: the secret (shown once, then only its digest exists) and its record."""

    secret: str
    record: TokenRecord


def digest(secret: str) -> str:
    """The SHA-256 hex digest a token is kept under."""
    return hashlib.sha256(secret.encode()).hexdigest()


def looks_like_folio_token(secret: str) -> bool:
    """Whether `secret` has the form of a Folio token (a JWT never starts so)."""
    return secret.startswith(TOKEN_PREFIX) and 20 < len(secret) < 200


class FolioTokens:
    """Creates, checks, lists and revokes Folio tokens, kept hashed in one Redis hash."""

    def __init__(self, redis: Redis | RedisCluster, *, prefix: str, clock: Callable[[], float] = time.time) -> None:
        self._redis = redis
        self._key = prefix
        self._clock = clock

    async def create(self, *, user: str, team: str, days: float, label: str = "") -> Issued:
        """A new token acting as `user` of `team`, valid `days` days (at most MAX_DAYS)."""
        if not 0 < days <= MAX_DAYS:
            raise ValueError(f"a token lasts from a minute to {MAX_DAYS} days")
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        hashed = digest(secret)
        now = self._clock()
        record = TokenRecord(
            id=hashed[:ID_CHARS], user=user, team=team, created=now, expires=now + days * 86400, label=label
        )
        async with redis_errors():
            await self._redis.hset(self._key, hashed, json.dumps(asdict(record)))
        return Issued(secret, record)

    async def check(self, secret: str) -> TokenRecord | None:
        """The record of a valid token; None for a token Folio never issued, revoked, or expired."""
        if not looks_like_folio_token(secret):
            return None
        async with redis_errors():
            raw = await self._redis.hget(self._key, digest(secret))
        record = _record(raw)
        if record is None or record.expired(self._clock()):
            return None
        return record

    async def list(self) -> list[TokenRecord]:
        """Every token not yet expired, oldest first; expired ones are dropped on the way."""
        async with redis_errors():
            raw = await self._redis.hgetall(self._key)
        now = self._clock()
        records, expired = [], []
        for field, value in raw.items():
            record = _record(value)
            if record is None or record.expired(now):
                expired.append(field)
            else:
                records.append(record)
        if expired:
            async with redis_errors():
                await self._redis.hdel(self._key, *expired)
        return sorted(records, key=lambda record: record.created)

    async def revoke(self, token_id: str) -> TokenRecord | None:
        """Revoke the token whose id is `token_id` (or its digest); None when there is none such."""
        wanted = token_id.strip().lower()
        if len(wanted) < ID_CHARS:
            return None
        async with redis_errors():
            raw = await self._redis.hgetall(self._key)
            for field, value in raw.items():
                name = field.decode() if isinstance(field, bytes) else field
                if name.startswith(wanted):
                    await self._redis.hdel(self._key, field)
                    return _record(value)
        return None


def tokens_of(store: ConversationStore) -> FolioTokens:
    """The Folio tokens in the store's Redis (`{prefix}:tokens`)."""
    redis, prefix = store.keyspace("tokens")
    return FolioTokens(redis, prefix=prefix)


def _record(raw: bytes | str | None) -> TokenRecord | None:
    if raw is None:
        return None
    try:
        return TokenRecord(**json.loads(raw))
    except (ValueError, TypeError):
        log.warning("unreadable Folio token record; it lets nobody in")
        return None
