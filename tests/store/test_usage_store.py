"""The usage counters and traces in Redis: one round trip, and never counted twice when Redis learns a script; the
latest answers an admin's Home tab lists."""

from __future__ import annotations

import uuid
from datetime import date

from redis.asyncio import Redis

from bot.store import ThreadKey, scripts
from bot.store import usage as usage_module
from bot.store.traces import RECENT_KEPT, TraceStore
from bot.store.usage import ModelTokens, TurnUsage, UsageStore

DAY = date(2026, 12, 1)
TURN = TurnUsage(
    workspace="T1",
    channel="C1",
    user="U1",
    profile="fast",
    calls=2,
    searches=1,
    models={"gpt-5-mini": ModelTokens(input=700, cached=300, output=90)},
)


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


async def test_a_workspaces_latest_answers_are_its_own_newest_first_and_bounded(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    traces = TraceStore(redis, prefix=f"test-{uuid.uuid4().hex[:8]}:trace")
    threads = [ThreadKey("T1", "C1", f"1700000000.{n:06d}") for n in range(RECENT_KEPT + 5)]
    for at, thread in enumerate(threads):
        await scripts.run(redis, [traces.call(thread, f'{{"n": {at}}}'), traces.listing(thread, at=1e9 + at)])
    await scripts.run(redis, [traces.call(threads[7], '{"n": "again"}'), traces.listing(threads[7], at=2e9)])
    await traces.delete(threads[-1])  # a deleted conversation is skipped, not shown empty
    other = ThreadKey("T2", "C9", "1700000000.000001")
    await scripts.run(redis, [traces.call(other, '{"n": "other"}'), traces.listing(other, at=3e9)])

    latest = await traces.recent("T1", count=3)

    assert latest == [
        (threads[7], '{"n": "again"}'),
        (threads[-2], f'{{"n": {len(threads) - 2}}}'),
        (threads[-3], f'{{"n": {len(threads) - 3}}}'),
    ]
    assert await redis.zcard(f"{traces._prefix}-recent:T1") == RECENT_KEPT
    assert await redis.ttl(f"{traces._prefix}-recent:T1") > 0


async def test_an_absurd_token_count_cannot_overflow_the_days_counters_for_everyone(redis_url: str) -> None:
    """One turn reporting ~2**63 tokens (a broken model server) must not leave the workspace's counter where every
    later HINCRBY overflows: nobody counted, every budget refusing."""
    redis = Redis.from_url(redis_url)
    usage = UsageStore(redis, prefix=f"test-{uuid.uuid4().hex[:8]}:usage", retention_days=1)
    absurd = TurnUsage(
        workspace="T1",
        channel="C1",
        user="U9",
        profile="fast",
        calls=1,
        models={"gpt-5-mini": ModelTokens(input=2**63 - 1, output=2**63 - 1)},
    )

    await usage.add(absurd, day=DAY)
    await usage.add(absurd, day=DAY)
    await usage.add(TURN, day=DAY)

    [alice] = await usage.spent(DAY, [("user", "U1")])
    [workspace] = await usage.spent(DAY, [("workspace", "T1")])
    assert alice == 790 and 790 < workspace < 2**63 - 1
    await redis.aclose()
