"""Turns in one thread run one at a time, in the order they lined up, and a dead holder does not block forever."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.store import ConversationStore, ThreadBusy, ThreadKey

THREAD = ThreadKey(team="T1", channel="C1", thread_ts="1.0")


async def test_turns_run_one_at_a_time_in_the_order_they_lined_up(store: ConversationStore) -> None:
    events: list[str] = []

    async def turn(name: str, lock) -> None:  # type: ignore[no-untyped-def]
        async with lock:
            events.append(f"start {name}")
            await asyncio.sleep(0.02)
            events.append(f"end {name}")

    locks = [store.lock(THREAD) for _ in range(4)]
    for lock in locks:  # lined up in this order (as the listener does before the ack) ...
        await lock.enqueue()
    # ... but started in reverse: order must follow the queue, not the scheduling
    await asyncio.gather(*(turn(str(i), lock) for i, lock in reversed(list(enumerate(locks)))))

    assert events == [f"{step} {i}" for i in range(4) for step in ("start", "end")]


async def test_other_threads_do_not_wait(store: ConversationStore) -> None:
    async with store.lock(THREAD):
        other = store.lock(ThreadKey(team="T1", channel="C1", thread_ts="2.0"), wait_seconds=1)
        started = time.monotonic()
        async with other:
            waited = time.monotonic() - started
    assert waited < 0.2  # taken at once, not after this thread's holder let go


async def test_a_holder_that_died_is_skipped_once_its_hold_expires(redis_url: str) -> None:
    from redis.asyncio import Redis

    store = ConversationStore(Redis.from_url(redis_url), prefix="test-dead", lock_hold_seconds=0.2)
    dead = store.lock(THREAD)
    await dead.__aenter__()  # acquired and never released, like a crashed process

    started = time.monotonic()
    async with store.lock(THREAD, wait_seconds=5):
        waited = time.monotonic() - started
    await store.close()
    assert 0.1 < waited < 2  # waited for the dead holder's 0.2 s hold to lapse, then took the lock


async def test_a_waiter_gives_up_with_a_clear_error(store: ConversationStore) -> None:
    async with store.lock(THREAD):
        with pytest.raises(ThreadBusy, match="still busy"):
            async with store.lock(THREAD, wait_seconds=0.2):
                pass
