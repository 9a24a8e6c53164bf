"""A thread written under both key forms (a rolling upgrade: an older Folio answered it after a newer one adopted
it): the newer record stays, and every response id either form knew is kept for deletion."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.models import Conversation, Scope
from bot.store import ConversationStore, ThreadKey
from bot.store.keys import legacy
from bot.store.traces import TraceStore

THREAD = ThreadKey(team="T1", channel="C1", thread_ts="1700000000.000300")


async def test_both_forms_keep_the_newer_record_and_every_response_id(store: ConversationStore, redis_url: str) -> None:
    newer = Conversation(scope=Scope(container="hr"), response_ids=["resp_new"], started_by="U1")
    await store.save(THREAD, newer)
    await store.add_response(THREAD, "resp_new_unfinished")
    older = Conversation(scope=Scope(container="hr"), response_ids=["resp_old"], started_by="U2")
    _, prefix = store.keyspace("x")
    old = legacy(prefix.removesuffix(":x"), THREAD)
    redis = Redis.from_url(redis_url)
    await redis.set(old.conversation, older.model_dump_json(), ex=3600)
    await redis.sadd(old.responses, "resp_old_unfinished")

    loaded = await store.load(THREAD)

    assert loaded is not None and loaded.started_by == "U1"
    assert sorted(loaded.response_ids) == ["resp_new", "resp_new_unfinished", "resp_old", "resp_old_unfinished"]
    assert await redis.exists(old.conversation, old.responses) == 0
    await redis.aclose()


async def test_folio_trace_finds_a_thread_traced_by_an_older_folio_and_by_this_one(
    store: ConversationStore, redis_url: str
) -> None:
    redis, prefix = store.keyspace("trace")
    older = ThreadKey(team="T1", channel="C1", thread_ts="1700000000.000400")
    await redis.rpush(f"{prefix}:{older}", '{"turn": "older"}')  # the name before issue 23
    traces = TraceStore(redis, prefix=prefix)
    await traces.add(ThreadKey(team="T2", channel="C1", thread_ts=older.thread_ts), '{"turn": "newer"}')

    found = await traces.find(thread_ts=older.thread_ts, channel="C1")

    assert sorted(found) == ['{"turn": "newer"}', '{"turn": "older"}']
