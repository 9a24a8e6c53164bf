"""The intake on a real Redis: a delivery is recorded once; its record is claimable only when its lease lapses (or it
is handed back); only the attempt that holds it can renew, mark done or hand back."""

from __future__ import annotations

import asyncio

from bot.store import ConversationStore, ThreadKey

THREAD = ThreadKey(team="T1", channel="C1", thread_ts="1.0")


async def _accept(store: ConversationStore, delivery: str, owner: str = "a#1") -> bool:
    lock = await store.accept(THREAD, delivery=delivery, request='{"q": 1}', owner=owner, new=None, reply=False)
    if lock is not None:
        await lock.leave()
    return lock is not None


async def test_a_delivery_is_recorded_once_and_stays_recorded_after_it_is_done(store: ConversationStore) -> None:
    assert await _accept(store, "message:1")
    assert not await _accept(store, "message:1", owner="b#1")  # Slack's retry, to another worker
    assert await store.intake.done("message:1", "a#1")
    assert not await _accept(store, "message:1", owner="b#1")  # done: still a duplicate
    assert await store.intake.unfinished() == 0


async def test_a_record_is_claimed_only_once_its_lease_lapses_and_then_by_one_consumer(redis_url: str) -> None:
    from redis.asyncio import Redis

    store = ConversationStore(Redis.from_url(redis_url), prefix="test-intake-lease", lock_lease_seconds=0.5)
    try:
        assert await _accept(store, "message:2")
        assert await store.intake.claim("b", limit=10) == []  # its worker is alive (its lease runs)
        assert await store.intake.renew([("message:2", "a#1")]) == set()
        await asyncio.sleep(0.7)  # the worker died: no renewal

        claimed, again = await asyncio.gather(store.intake.claim("b", limit=10), store.intake.claim("c", limit=10))
        assert [(c.delivery, c.owner, c.attempt, c.request) for c in claimed + again] == [
            ("message:2", "b#2", 2, '{"q": 1}')
        ]
        await store.intake.note_shown("message:2", "a#1", "9.9")  # the dead attempt can no longer write
        assert await store.intake.renew([("message:2", "a#1")]) == {"message:2"}
        assert not await store.intake.done("message:2", "a#1")
        assert await store.intake.unfinished() == 1
        assert await store.intake.done("message:2", "b#2")
        assert await store.intake.unfinished() == 0
    finally:
        await store.close()


async def test_a_handed_back_record_is_claimable_at_once_with_what_it_showed(store: ConversationStore) -> None:
    assert await _accept(store, "message:3")
    await store.intake.note_shown("message:3", "a#1", "1700000000.000200")
    await store.intake.hand_back([("message:3", "a#1")], counts=False)

    (claimed,) = await store.intake.claim("b", limit=10)
    assert claimed.shown_ts == "1700000000.000200" and claimed.attempt == 1  # a hand-back is not a failed attempt


async def test_a_damaged_record_does_not_stop_every_other_claim(redis_url: str) -> None:
    """One record with a non-numeric attempt (or not a record at all) used to fail every claim ("Redis is not
    reachable"), so no dead worker's turn was taken over for a day."""
    from redis.asyncio import Redis

    redis = Redis.from_url(redis_url)
    store = ConversationStore(redis, prefix="test-intake-damaged", lock_lease_seconds=0.3)
    try:
        for delivery in ("message:d1", "message:d2", "message:d3"):
            assert await _accept(store, delivery)
        tag = "{test-intake-damaged:intake}"
        await redis.hset(f"{tag}:turn:message:d1", "attempt", "one")  # damaged by hand, a bug or a restore
        await redis.hset(f"{tag}:turn:message:d2", "attempt", "1.5")
        await redis.delete(f"{tag}:turn:message:d3")
        await redis.set(f"{tag}:turn:message:d3", "not a hash")
        await asyncio.sleep(0.5)  # every worker died

        claimed = {c.delivery: c for c in await store.intake.claim("b", limit=10)}

        assert claimed["message:d2"].attempt == 2 and claimed["message:d2"].request == '{"q": 1}'
        assert claimed["message:d1"].attempt > 1  # runs again, counted: a damaged count never resets the limit
        assert "message:d3" not in claimed
        assert await store.intake.claim("c", limit=10) == []  # and the unreadable one does not come back forever
    finally:
        await store.close()


async def test_the_records_of_a_process_seen_dead_are_claimable_at_once_not_after_their_lease(
    store: ConversationStore,
) -> None:
    """A worker SIGKILLed: its parent releases its records, so that a survivor takes its turns over within a claim
    look instead of the whole lease (10 s: a redeploy soon after could end the run before the turn was answered)."""
    assert await _accept(store, "message:k1", owner="host:41:ab#1")
    assert await _accept(store, "message:k2", owner="host:411:cd#1")  # another process: its pid starts alike
    assert await store.intake.claim("b", limit=10) == []  # their leases run

    assert await store.intake.release("host:41:") == ['{"q": 1}']  # its request: whose thread's lock to free

    (claimed,) = await store.intake.claim("b", limit=10)
    assert (claimed.delivery, claimed.attempt) == ("message:k1", 2)  # the dead attempt counts towards the limit
    assert await store.intake.release("host:41:") == []  # the survivor's attempt is not released again
