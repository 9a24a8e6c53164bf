"""Issue 25: a question Slack delivers is answered or told, through a Redis outage; never dropped, never twice.

A real redis-server on a loopback port, killed mid-turn and started again on the same append-only file (as
compose's Redis); Folio's Redis client is the one `folio serve` builds (its reconnect policy).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot import messages
from bot.models import Conversation, Scope
from bot.store import ConversationStore, ThreadKey
from bot.turns import TurnRequest
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, search, tools
from tests.fakes.slack_api import TEAM, FakeSlack
from tests.redis_process import RedisProcess
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, Harness, user_ts, wait_until

QUESTION = "What protection is there against balance billing?"
ANSWER = "You are protected from balance billing [S1]."
LEASE = 4.0  # seconds: the outage below (about 3 s) is shorter than one lease, as a Redis restart is


def answers(harness: Harness, ts: str) -> int:
    return sum(ANSWER.split(" [")[0] in text for text in harness.texts(ts))


@pytest.mark.slow  # starts a process
async def test_redis_killed_mid_turn_nothing_is_lost_and_the_thread_answers_again_within_seconds(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, tmp_path: Path
) -> None:
    writing, release = threading.Event(), threading.Event()

    def respond(request: Request) -> Step:  # each turn: one search, then the answer (held until the test says)
        if not request.tool_outputs:
            return tools(search("balance billing protection"))
        writing.set()
        release.wait(30)
        return reply(ANSWER)

    fake_model.respond_with(respond)
    with RedisProcess(tmp_path / "redis") as redis:
        async with running_app(
            slack, fake_model, redis_url, corpus_index, redis=redis.url, lock_lease=LEASE, production_client=True
        ) as harness:
            ts = await harness.mention(QUESTION)
            await wait_until(writing.is_set)
            redis.kill()
            killed = time.monotonic()
            follow_up = {
                "type": "message",
                "channel": CHANNEL,
                "channel_type": "channel",
                "user": ALICE,
                "text": "And for out-of-network care?",
                "ts": user_ts(),
                "thread_ts": ts,
            }
            assert await harness.event(follow_up) == 500  # Redis cannot record it: not acknowledged, Slack retries
            release.set()  # the first turn ends while Redis is down: the model's response cannot be recorded
            await wait_until(lambda: harness.texts(ts) == [messages.STORE_DOWN])  # so it says so: told, not lost
            await asyncio.sleep(max(0.0, 3.0 - (time.monotonic() - killed)))

            assert await harness.event(follow_up, retry=3) == 200  # Slack's last try: held until Redis is back
            redis.start()
            back = time.monotonic()
            await wait_until(lambda: answers(harness, ts) == 1, timeout=30)
            answered_after = time.monotonic() - back
            await asyncio.sleep(LEASE + 2)  # past the first turn's lease: nobody answers it a second time
            await harness.settle()

            texts = harness.texts(ts)
    assert answered_after < LEASE + 1  # within seconds of Redis returning
    assert len(texts) == 2 and texts[0] == messages.STORE_DOWN and ANSWER.split(" [")[0] in texts[1], texts


async def test_a_turn_handed_back_at_shutdown_is_finished_by_another_process_at_once_and_once(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    writing, release = threading.Event(), threading.Event()

    def respond(request: Request) -> Step:
        if not request.tool_outputs:
            return tools(search("balance billing protection"))
        writing.set()
        release.wait(30)
        return reply(ANSWER)

    fake_model.respond_with(respond)
    prefix = f"handback-{uuid.uuid4().hex[:8]}"  # both processes share one Redis state
    async with running_app(slack, fake_model, redis_url, corpus_index, prefix=prefix) as stopping:
        ts = await stopping.mention(QUESTION)
        await wait_until(writing.is_set)
        async with running_app(slack, fake_model, redis_url, corpus_index, prefix=prefix) as other:
            assert stopping.folio is not None
            handed = await stopping.folio.consumer.hand_back()  # a redeploy: this process stops taking turns
            release.set()
            started = time.monotonic()
            await wait_until(lambda: answers(other, ts) == 1, timeout=20)
            taken_over = time.monotonic() - started
            await other.settle()
        await stopping.settle()

    assert handed == 1 and taken_over < 3  # claimable at once, not after a lease
    assert stopping.texts(ts) == other.texts(ts) and len(other.texts(ts)) == 1  # answered once, no failure shown


async def test_a_turn_that_dies_with_every_worker_is_told_after_three_attempts_not_tried_for_ever(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    prefix, lease = f"gave-up-{uuid.uuid4().hex[:8]}", 0.3
    store = ConversationStore(Redis.from_url(redis_url), prefix=prefix, lock_lease_seconds=lease)
    thread = ThreadKey(team=TEAM, channel=CHANNEL, thread_ts=user_ts())
    request = TurnRequest(thread=thread, question=QUESTION, user=ALICE, delivery=f"message:{thread.thread_ts}")
    try:  # accepted by a worker that died, then claimed by two more that died too
        lock = await store.accept(
            thread, delivery=request.delivery, request=request.to_json(), owner="w1#1", new=None, reply=False
        )
        assert lock is not None
        for _ in range(2):
            await asyncio.sleep(lease + 0.1)
            assert len(await store.intake.claim("dying", limit=1)) == 1
        await asyncio.sleep(lease + 0.1)
    finally:
        await store.close()

    async with running_app(slack, fake_model, redis_url, corpus_index, prefix=prefix, lock_lease=lease) as harness:
        await wait_until(lambda: harness.texts(thread.thread_ts) == [messages.TURN_GAVE_UP], timeout=10)
        await harness.settle()
    assert fake_model.requests == []  # not run a fourth time


async def test_a_turn_whose_worker_died_after_posting_and_saving_its_answer_is_not_answered_again(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    prefix, lease = f"posted-{uuid.uuid4().hex[:8]}", 0.3
    store = ConversationStore(Redis.from_url(redis_url), prefix=prefix, lock_lease_seconds=lease)
    thread = ThreadKey(team=TEAM, channel=CHANNEL, thread_ts=user_ts())
    request = TurnRequest(thread=thread, question=QUESTION, user=ALICE, delivery=f"message:{thread.thread_ts}")
    shown = "1700000000.000900"  # the stream it started, which its answer then filled
    try:  # the worker accepted it, showed and saved its answer, and died before marking it done
        lock = await store.accept(
            thread, delivery=request.delivery, request=request.to_json(), owner="w1#1", new=None, reply=False
        )
        assert lock is not None
        await store.intake.note_shown(request.delivery, "w1#1", shown)
        await store.save(thread, Conversation(scope=Scope(container="benefits"), started_by=ALICE, message_ts=[shown]))
        await asyncio.sleep(lease + 0.1)
    finally:
        await store.close()

    async with running_app(slack, fake_model, redis_url, corpus_index, prefix=prefix, lock_lease=lease) as harness:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and await harness.store.intake.unfinished():
            await asyncio.sleep(0.1)
        assert await harness.store.intake.unfinished() == 0  # claimed, found answered, marked done
        await harness.settle()
    assert harness.texts(thread.thread_ts) == [] and fake_model.requests == []  # nothing posted, nothing rerun


async def test_a_turn_that_loses_its_threads_lease_says_so_then_answers_in_that_message_once(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The port onto the one turn (issue 19): LeaseLost leaves `answer` past `run_slack_turn` to the consumer, which
    # runs the turn again; the thread is told LEASE_LOST (not "something went wrong") in the message the next
    # attempt then answers in. Each attempt leaves its own turn record.
    caplog.set_level(logging.INFO, logger="folio.turn")
    writing, release = threading.Event(), threading.Event()
    calls = 0

    def respond(request: Request) -> Step:
        nonlocal calls
        if not request.tool_outputs:
            return tools(search("balance billing protection"))
        calls += 1
        if calls == 1:  # the first attempt is still writing when another process takes its thread
            writing.set()
            release.wait(30)
        return reply(ANSWER)

    fake_model.respond_with(respond)
    lease = 1.5
    async with running_app(slack, fake_model, redis_url, corpus_index, lock_lease=lease) as harness:
        ts = await harness.mention(QUESTION)
        await wait_until(writing.is_set)
        lock = f"{harness.store.keyspace('lock')[1]}:{{{harness.thread_key(ts)}}}"
        redis = Redis.from_url(redis_url)
        try:  # a process that found the lease lapsed (this one stalled) holds the thread for a moment
            await redis.set(f"{lock}:fence", 999)
            await redis.set(f"{lock}:holder", "other:999", px=int(lease * 1000))
        finally:
            await redis.aclose()
        await wait_until(lambda: harness.texts(ts) == [messages.LEASE_LOST], timeout=10)
        release.set()
        await wait_until(lambda: answers(harness, ts) == 1, timeout=20)
        await harness.settle()
        texts, unfinished = harness.texts(ts), await harness.store.intake.unfinished()

    assert len(texts) == 1 and ANSWER.split(" [")[0] in texts[0], texts  # LEASE_LOST's message, now the answer
    assert unfinished == 0 and calls == 2
    records = [record.turn for record in caplog.records if record.name == "folio.turn"]  # type: ignore[attr-defined]
    assert len(records) == 2 and records[-1]["outcome"] == "answered", records
