"""The shared rate budget (bot.store.pace.SharedPace): one bucket per name in Redis, spent together by every process
on that Redis, refused calls never spent, a 429's Retry-After honoured by all of them, idle buckets gone."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from redis.asyncio import Redis

from bot.errors import StoreUnavailable
from bot.store.pace import SharedPace


@pytest.fixture
def prefix() -> str:
    return f"test-{uuid.uuid4().hex[:8]}:pace"


async def test_two_processes_spend_one_burst_and_other_workspaces_have_their_own(redis_url: str, prefix: str) -> None:
    # Two clients, as two worker processes: the budget is the workspace's, not each process's.
    one, two = Redis.from_url(redis_url), Redis.from_url(redis_url)
    first = SharedPace(one, prefix=prefix, per_minute=60, burst=4)
    second = SharedPace(two, prefix=prefix, per_minute=60, burst=4)
    try:
        waits = [await pace.take("T1") for pace in (first, second, first, second, first, second)]

        assert waits[:4] == [0.0] * 4  # the burst, whoever spends it
        assert all(0.5 < wait <= 1.0 for wait in waits[4:])  # then about a second each (60 a minute)
        assert await second.take("T2") == 0.0  # another workspace: its own bucket
    finally:
        await one.aclose()
        await two.aclose()


async def test_a_refused_take_spends_nothing_and_the_budget_refills(redis_url: str, prefix: str) -> None:
    redis = Redis.from_url(redis_url)
    pace = SharedPace(redis, prefix=prefix, per_minute=600, burst=1)  # one every 100 ms
    try:
        assert await pace.take("T1") == 0.0
        refused = [await pace.take("T1") for _ in range(5)]
        assert all(wait > 0 for wait in refused)

        await asyncio.sleep(max(refused) + 0.02)

        assert await pace.take("T1") == 0.0  # five refusals did not push the next call further out
    finally:
        await redis.aclose()


async def test_a_drain_holds_every_process_back_for_the_seconds_slack_asked(redis_url: str, prefix: str) -> None:
    redis = Redis.from_url(redis_url)
    pace = SharedPace(redis, prefix=prefix, per_minute=6000, burst=50)
    other = SharedPace(redis, prefix=prefix, per_minute=6000, burst=50)
    try:
        await pace.drain("T1", seconds=3)

        wait = await other.take("T1")

        assert 2.5 < wait <= 3.1  # a full bucket notwithstanding
        assert await other.take("T2") == 0.0
    finally:
        await redis.aclose()


async def test_an_idle_bucket_expires_and_redis_failing_is_store_unavailable(redis_url: str, prefix: str) -> None:
    redis = Redis.from_url(redis_url)
    pace = SharedPace(redis, prefix=prefix, per_minute=60_000, burst=10)
    try:
        await pace.take("T1")
        ttl = await redis.pttl(f"{prefix}:T1")
        assert 0 < ttl <= 1100  # full again in a millisecond: gone a second later
    finally:
        await redis.aclose()
    dead = Redis.from_url("redis://127.0.0.1:1", socket_connect_timeout=0.2)
    with pytest.raises(StoreUnavailable):
        await SharedPace(dead, prefix=prefix, per_minute=60, burst=1).take("T1")
    await dead.aclose()
