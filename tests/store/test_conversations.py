"""The conversation record, its expiry, dedupe, feedback and deletion bookkeeping, on a real Redis."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.app import open_folio
from bot.config import Settings
from bot.errors import StoreUnavailable
from bot.models import Answer, Conversation, Scope, Tag
from bot.store import THIRTY_DAYS, ConversationStore, ThreadKey

THREAD = ThreadKey(team="T1", channel="C1", thread_ts="1700000000.000100")


def conversation_with_one_turn() -> Conversation:
    conversation = Conversation(scope=Scope(container="hr", tags=(Tag(key="year", value="2025"),)), started_by="U1")
    answer = Answer(text="Ten days [1].", response_ids=("resp_1", "resp_2"), final_response_id="resp_2")
    conversation.record("How many days?", answer, asked_by="U1")
    return conversation


async def test_a_saved_conversation_comes_back_whole_with_a_thirty_day_expiry(
    store: ConversationStore, redis_url: str
) -> None:
    original = conversation_with_one_turn()
    await store.save(THREAD, original)

    loaded = await store.load(THREAD)

    assert loaded == original
    assert loaded.last_response_id == "resp_2" and loaded.turns[0].question == "How many days?"
    assert loaded.scope.tags == (Tag(key="year", value="2025"),)
    redis = Redis.from_url(redis_url)
    ttl = await redis.ttl(store._key(THREAD))
    await redis.aclose()
    assert THIRTY_DAYS - 5 <= ttl <= THIRTY_DAYS


async def test_threads_are_kept_apart_by_workspace_channel_and_thread(store: ConversationStore) -> None:
    await store.save(THREAD, conversation_with_one_turn())

    assert await store.load(ThreadKey(team="T2", channel="C1", thread_ts=THREAD.thread_ts)) is None
    assert await store.load(ThreadKey(team="T1", channel="C2", thread_ts=THREAD.thread_ts)) is None
    assert await store.exists(THREAD)


async def test_a_delivery_is_claimed_once(store: ConversationStore) -> None:
    assert await store.first_delivery("event", "Ev1")
    assert not await store.first_delivery("event", "Ev1")
    assert await store.first_delivery("event", "Ev2")


async def test_feedback_is_stored_on_the_turn_and_keeps_the_expiry(store: ConversationStore) -> None:
    await store.save(THREAD, conversation_with_one_turn())

    assert await store.set_feedback(THREAD, 0, "not_helpful")
    assert not await store.set_feedback(THREAD, 5, "helpful")

    loaded = await store.load(THREAD)
    assert loaded is not None and loaded.turns[0].feedback == "not_helpful"


async def test_remaining_ids_of_a_half_done_deletion_stay_recorded(store: ConversationStore) -> None:
    conversation = conversation_with_one_turn()
    conversation.message_ts = ["1.1", "1.2"]
    await store.save(THREAD, conversation)

    await store.record_remaining(THREAD, conversation, response_ids=["resp_2"], message_ts=["1.2"])

    loaded = await store.load(THREAD)
    assert loaded is not None and loaded.response_ids == ["resp_2"] and loaded.message_ts == ["1.2"]
    await store.delete(THREAD)
    assert await store.load(THREAD) is None


async def test_an_unreachable_redis_is_a_store_error(tmp_path: Path) -> None:
    broken = ConversationStore(Redis.from_url(f"unix://{tmp_path}/nothing.sock"))
    with pytest.raises(StoreUnavailable):
        await broken.load(THREAD)
    with pytest.raises(StoreUnavailable):
        await broken.first_delivery("event", "Ev1")
    with pytest.raises(StoreUnavailable):
        await broken.lock(THREAD).enqueue()
    await broken.close()


@pytest.mark.slow  # starts a process
async def test_without_redis_url_an_embedded_redis_starts_in_the_data_folder(tmp_path: Path) -> None:
    settings = Settings(folio_data_dir=tmp_path / "data", folio_sample_corpus=False)
    async with open_folio(settings, serving=True) as folio:
        assert folio.store is not None and folio.redis_server is not None
        await folio.store.save(THREAD, conversation_with_one_turn())
        assert (await folio.store.load(THREAD)) is not None
    assert (tmp_path / "data" / "redis.db").exists()  # saved when Folio stopped it


async def test_taking_on_a_thread_makes_it_folios_at_once_without_overwriting_a_conversation(
    store: ConversationStore,
) -> None:
    fresh = Conversation(scope=Scope(container="hr"), started_by="U2")

    lock = await store.accept(THREAD, delivery="message:1", request="{}", owner="a#1", new=fresh, reply=False)

    assert lock is not None and await store.exists(THREAD)  # before any turn ran
    assert (await store.load(THREAD)) == fresh
    await lock.leave()
    await store.save(THREAD, conversation_with_one_turn())
    again = await store.accept(THREAD, delivery="message:2", request="{}", owner="a#1", new=fresh, reply=False)
    assert again is not None and (await store.load(THREAD)).last_response_id == "resp_2"
    await again.leave()


async def test_a_repeated_delivery_is_dropped_and_leaves_the_line_free(store: ConversationStore) -> None:
    first = await store.accept(THREAD, delivery="message:7", request="{}", owner="a#1", new=None, reply=False)
    assert first is not None
    async with first:
        again = await store.accept(THREAD, delivery="message:7", request="{}", owner="b#1", new=None, reply=False)
        assert again is None
    async with store.lock(THREAD, wait_seconds=1):  # nobody is left in line ahead of a new turn
        pass


async def test_response_ids_recorded_as_they_come_load_with_the_conversation_until_deleted(
    store: ConversationStore, redis_url: str
) -> None:
    await store.save(THREAD, conversation_with_one_turn())
    await store.add_response(THREAD, "resp_3")  # a later turn that never finished
    await store.add_response(THREAD, "resp_2")  # already in the record: listed once

    loaded = await store.load(THREAD)
    assert loaded is not None and loaded.response_ids == ["resp_1", "resp_2", "resp_3"]

    await store.record_remaining(THREAD, loaded, response_ids=["resp_3"], message_ts=[])
    assert (await store.load(THREAD)).response_ids == ["resp_3"]  # the deleted ones do not come back

    await store.delete(THREAD)
    redis = Redis.from_url(redis_url)
    left = await redis.keys(f"{store._prefix}:*")
    await redis.aclose()
    assert left == []
