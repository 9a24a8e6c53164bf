"""Threads stored by a Folio before issue 23 (keys without the thread's hash tag) keep working after the upgrade: a
reply continues the conversation, and deleting the thread deletes everything, on a single Redis (where those
deployments ran: a cluster was impossible for them)."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.slack.render import ACTION_DELETE
from bot.store import ConversationStore, ThreadKey
from bot.store.keys import legacy, thread_keys
from tests.fakes.openai_responses import reply, search, tools
from tests.slack.harness import CHANNEL, Harness

QUESTION = "What protection is there against balance billing?"


async def as_an_older_folio_kept_it(store: ConversationStore, thread: ThreadKey) -> dict[str, int]:
    """Move the thread's keys to the names Folio gave them before issue 23 (the records themselves did not change);
    each key's remaining TTL, by old name."""
    redis, prefix = store.keyspace("conv")
    prefix = prefix.removesuffix(":conv")
    new, old = thread_keys(prefix, thread), legacy(prefix, thread)
    ttls = {}
    for fresh, stale in (
        (new.conversation, old.conversation),
        (new.responses, old.responses),
        (new.traces, old.traces),
    ):
        assert await redis.exists(fresh), fresh
        await redis.rename(fresh, stale)
        ttls[stale] = await redis.ttl(stale)
    return ttls


async def thread_keys_left(redis: Redis, store: ConversationStore, thread: ThreadKey) -> list[str]:
    _, prefix = store.keyspace("x")
    prefix = prefix.removesuffix(":x")
    every = [*vars(thread_keys(prefix, thread)).values(), *vars(legacy(prefix, thread)).values()]
    return [key for key in every if await redis.exists(key)]


async def test_a_reply_in_a_thread_an_older_folio_answered_continues_it(harness: Harness) -> None:
    harness.model.script(
        tools(search("balance billing protection")),
        reply("You are protected [S1]."),
        reply("Yes, in network only [S1]."),
    )
    ts = await harness.mention(QUESTION)
    await harness.settle()
    thread = harness.thread_key(ts)
    first = await harness.store.load(thread)
    assert first is not None and first.last_response_id
    ttls = await as_an_older_folio_kept_it(harness.store, thread)

    await harness.message("Does that hold out of network?", thread_ts=ts)
    await harness.settle()

    assert harness.model.requests[-1].body["previous_response_id"] == first.last_response_id
    assert "in network only" in harness.texts(ts)[-1]
    conversation = await harness.store.load(thread)
    assert conversation is not None and [turn.question for turn in conversation.turns] == [
        QUESTION,
        "Does that hold out of network?",
    ]
    redis, _ = harness.store.keyspace("x")
    left = await thread_keys_left(redis, harness.store, thread)
    assert sorted(left) == sorted(vars(thread_keys(harness.store.keyspace("x")[1][: -len(":x")], thread)).values())
    assert all(ttl > 0 for ttl in ttls.values())


async def test_deleting_a_thread_an_older_folio_answered_deletes_everything(harness: Harness) -> None:
    harness.model.script(tools(search("balance billing protection")), reply("You are protected [S1]."))
    ts = await harness.mention(QUESTION)
    await harness.settle()
    thread = harness.thread_key(ts)
    created = harness.model.stored_ids()
    assert len(created) == 2
    await as_an_older_folio_kept_it(harness.store, thread)

    [first, *_] = harness.slack.thread(CHANNEL, ts)
    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=first.ts)
    await harness.settle()

    assert harness.ephemeral() == [
        "Deleted: 1 message of mine in this thread, 2 responses stored by the model service, "
        "and my record of this conversation."
    ]
    assert sorted(harness.model.deleted) == sorted(created) and harness.model.stored_ids() == []
    assert harness.texts(ts) == []
    redis, _ = harness.store.keyspace("x")
    assert await thread_keys_left(redis, harness.store, thread) == []
