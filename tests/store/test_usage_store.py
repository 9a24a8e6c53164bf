"""The usage counters and traces in Redis: one round trip, and never counted twice when Redis learns a script."""

from __future__ import annotations

import uuid
from datetime import date

from redis.asyncio import Redis

from bot.store import ThreadKey
from bot.store import usage as usage_module
from bot.store.traces import TraceStore
from bot.store.usage import ModelTokens, TurnUsage, UsageStore

DAY = date(2026, 12, 1)
TURN = TurnUsage(workspace="T1", channel="C1", user="U1", profile="fast", calls=2, searches=1,
                 models={"gpt-5-mini": ModelTokens(input=700, cached=300, output=90)})  # fmt: skip


async def test_a_turn_is_counted_once_when_redis_knows_one_script_and_not_the_other(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    usage = UsageStore(redis, prefix=f"{prefix}:usage", retention_days=1)
    traces = TraceStore(redis, prefix=f"{prefix}:trace")
    thread = ThreadKey("T1", "C1", "1.0")
    await redis.script_flush()
    await redis.script_load(usage_module.ADD.source)  # as when another turn loaded it a moment ago

    await usage.add(TURN, day=DAY, also=[traces.call(thread, '{"turn": 1}')])

    assert await usage.spent(DAY, [("user", "U1"), ("channel", "C1"), ("workspace", "T1")]) == [790, 790, 790]
    [row] = await usage.rows(since=DAY, until=DAY, by="profile")
    assert (row.key, row.turns, row.calls, row.searches, row.input, row.cached, row.output) == (
        "fast",
        1,
        2,
        1,
        700,
        300,
        90,
    )
    assert await traces.all(thread) == ['{"turn": 1}']
    assert 0 < await redis.ttl(usage.day_key(DAY)) <= 86400
    await redis.aclose()


async def test_the_questions_per_minute_window_counts_only_what_it_lets_through(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    usage = UsageStore(redis, prefix=f"test-{uuid.uuid4().hex[:8]}:usage", retention_days=1)

    waits = [await usage.take_question("U1", per_minute=3) for _ in range(5)]

    assert waits[:3] == [0.0, 0.0, 0.0] and all(55 < wait <= 60 for wait in waits[3:])
    assert await usage.take_question("U2", per_minute=3) == 0.0  # one person's window is theirs alone
    await redis.aclose()
