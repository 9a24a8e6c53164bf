"""Folio tokens in Redis: kept only as a digest, refused once expired or revoked, listed without the secret."""

from __future__ import annotations

import uuid

from redis.asyncio import Redis

from bot.store.tokens import FolioTokens, digest


async def test_a_token_is_kept_hashed_and_refused_once_expired_or_revoked(redis_url: str) -> None:
    now = [1_800_000_000.0]
    redis = Redis.from_url(redis_url)
    tokens = FolioTokens(redis, prefix=f"test-tokens-{uuid.uuid4().hex[:8]}", clock=lambda: now[0])
    try:
        issued = await tokens.create(user="U0ANA0001", team="T1", days=1)
        kept = await redis.hgetall(tokens._key)
        assert list(kept) == [digest(issued.secret).encode()] and issued.secret.encode() not in b"".join(kept.values())
        assert (await tokens.check(issued.secret)).user == "U0ANA0001"
        assert await tokens.check(issued.secret + "x") is None

        now[0] += 86400
        assert await tokens.check(issued.secret) is None  # expired
        assert await tokens.list() == []  # and dropped

        second = await tokens.create(user="U0BEN0001", team="T1", days=30)
        assert await tokens.revoke(second.record.id[:6]) is None  # too short to name one token
        assert (await tokens.revoke(second.record.id)).user == "U0BEN0001"
        assert await tokens.check(second.secret) is None
    finally:
        await redis.delete(tokens._key)
        await redis.aclose()
