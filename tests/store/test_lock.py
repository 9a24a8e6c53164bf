"""Turns in one thread run one at a time, in the order they lined up; a holder that dies frees the thread within one
short lease, and a holder that lost its lease can neither keep nor release the thread."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from redis.asyncio import Redis

from bot.models import Conversation, Scope
from bot.store import ConversationStore, ThreadBusy, ThreadKey
from bot.store.lease import process_prefix
from tests.conftest import ROOT

THREAD = ThreadKey(team="T1", channel="C1", thread_ts="1.0")
LEASE = 1.0  # seconds: the holders below renew every third of it


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


async def test_a_waiter_gives_up_with_a_clear_error(store: ConversationStore) -> None:
    async with store.lock(THREAD):
        with pytest.raises(ThreadBusy, match="still busy"):
            async with store.lock(THREAD, wait_seconds=0.2):
                pass


async def test_a_live_holder_keeps_the_thread_for_longer_than_its_lease(redis_url: str) -> None:
    store = ConversationStore(Redis.from_url(redis_url), prefix=_prefix(), lock_lease_seconds=0.3)
    try:
        async with store.lock(THREAD):
            with pytest.raises(ThreadBusy):  # four leases go by: the holder's renewals keep it
                async with store.lock(THREAD, wait_seconds=1.2):
                    pass
    finally:
        await store.close()


@pytest.mark.slow  # starts a process
async def test_a_holder_killed_while_holding_frees_the_thread_within_one_lease(redis_url: str) -> None:
    prefix = _prefix()
    store = ConversationStore(Redis.from_url(redis_url), prefix=prefix, lock_lease_seconds=LEASE)
    try:
        with _holder(redis_url, prefix) as holder:
            holder.send_signal(signal.SIGKILL)  # dies holding: nothing releases the lock
            holder.wait()
            killed = time.monotonic()
            async with store.lock(THREAD, wait_seconds=30):
                waited = time.monotonic() - killed
    finally:
        await store.close()
    assert waited < LEASE + 0.5  # within one lease, not FOLIO_TURN_TIMEOUT + 60 s (the old hold: 180 s here)


@pytest.mark.slow  # starts a process
async def test_a_holder_its_parent_saw_die_frees_the_thread_at_once_not_after_its_lease(redis_url: str) -> None:
    prefix = _prefix()
    store = ConversationStore(Redis.from_url(redis_url), prefix=prefix, lock_lease_seconds=10.0)
    try:
        with _holder(redis_url, prefix, lease=10.0) as holder:
            holder.send_signal(signal.SIGKILL)  # dies holding, as a worker SIGKILLed mid-turn
            holder.wait()
            assert await store.lock(THREAD).forget(process_prefix(holder.pid + 1)) == 0  # another process's: kept
            assert await store.lock(THREAD).forget(process_prefix(holder.pid)) == 1
            killed = time.monotonic()
            async with store.lock(THREAD, wait_seconds=30):
                waited = time.monotonic() - killed
    finally:
        await store.close()
    assert waited < 1.0  # at once, not after the dead holder's 10 s lease


@pytest.mark.slow  # starts a process
async def test_a_holder_past_its_lease_loses_its_work_and_cannot_release_the_next_holder(redis_url: str) -> None:
    prefix = _prefix()
    store = ConversationStore(Redis.from_url(redis_url), prefix=prefix, lock_lease_seconds=LEASE)
    try:
        with _holder(redis_url, prefix) as holder:
            holder.send_signal(signal.SIGSTOP)  # a paused process: it cannot renew, and does not know it
            newer = store.lock(THREAD, wait_seconds=30)
            async with newer:
                fence = newer.fence
                holder.send_signal(signal.SIGCONT)  # back: it finds its lease gone, stops, and releases what it had
                line = await asyncio.to_thread(holder.stdout.readline)
                assert line.strip() == "lost"  # its work was cancelled with LeaseLost
                assert holder.wait(timeout=10) == 0
                with pytest.raises(ThreadBusy):  # its release did not free the newer holder's thread
                    async with store.lock(THREAD, wait_seconds=2 * LEASE):
                        pass
    finally:
        await store.close()
    assert fence > 1  # the newer hold carries a larger fence than the stale one


@contextmanager
def _holder(redis_url: str, prefix: str, lease: float = LEASE) -> Iterator[subprocess.Popen[str]]:
    """A process holding THREAD's lock (tests/store/lock_holder.py), once it says so."""
    command = [sys.executable, "-m", "tests.store.lock_holder", redis_url, prefix, str(lease)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("held "), "the holder never took the lock"
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)
            process.kill()
            process.wait()


def _prefix() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


async def test_a_turn_saved_with_its_lock_lets_the_next_turn_in_and_never_frees_that_turns_hold(
    redis_url: str,
) -> None:
    """The save releases the lock in its own transaction (one round trip): the next turn in line starts once the
    answer is saved, sees it, and keeps the thread, though the first turn leaves its `async with` only later and its
    lease (renewed every 0.1 s until the save) would have been taken back by a renewal after the release."""
    store = ConversationStore(Redis.from_url(redis_url), prefix=_prefix(), lock_lease_seconds=0.3)
    saved = Conversation(scope=Scope(container="hr"), started_by="U1")
    seen: list[Conversation | None] = []
    try:
        first = await store.accept(THREAD, delivery="message:1", request="{}", owner="a#1", new=None, reply=False)
        second = await store.accept(THREAD, delivery="message:2", request="{}", owner="a#1", new=None, reply=False)
        assert first is not None and second is not None

        async def next_turn() -> None:
            async with second:
                seen.append(await store.load(THREAD))
                await asyncio.sleep(1.0)  # three leases: held by its own renewals

        async with first:
            waiting = asyncio.create_task(next_turn())
            await asyncio.sleep(0.5)
            assert seen == []  # the first turn holds the thread
            await store.save(THREAD, saved, release=first)
            await asyncio.sleep(0.5)
            assert seen == [saved]  # in, while the first turn is still inside its `async with`
        with pytest.raises(ThreadBusy):  # the first turn's exit freed nothing of the second's
            async with store.lock(THREAD, wait_seconds=0.3):
                pass
        await waiting
    finally:
        await store.close()
