"""One door for every turn (bot.turns.consumer): a mention, a `/ask` and a private answer ("Search what only I can
see") each leave the same kinds of records: what the turn spent in the usage counters, its trace, and its
delivery's mark in the durable intake (done). A turn that skipped the door (as private answers did: answered with
a plain recorder) left its tokens uncounted, no trace, and nothing to take over had its worker died."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bot.store import ThreadKey
from bot.store.traces import TraceStore
from bot.store.usage import UsageStore
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, Harness
from tests.slack.test_access import FINANCE_GROUP, POLICY, QUESTION
from tests.slack.test_usage import Metered


@dataclass(frozen=True)
class Records:
    """What the stores hold for ALICE, read straight from Redis."""

    tokens: int  # input + output tokens counted today
    turns: int  # turns counted today
    done: int  # intake deliveries marked done


@pytest.fixture
async def metered() -> Metered:
    return Metered(seed=31)


@pytest.fixture
async def app(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path, metered: Metered
) -> AsyncIterator[Harness]:
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])  # Alice may read finance: offered a private answer
    fake_model.respond_with(metered)
    async with running_app(slack, fake_model, redis_url, access_index, policy=POLICY) as running:
        yield running


async def records(harness: Harness) -> Records:
    redis, prefix = harness.store.keyspace("usage")
    today = datetime.now(timezone.utc).date()
    rows = {
        row.key: row
        for row in await UsageStore(redis, prefix=prefix, retention_days=30).rows(since=today, until=today, by="user")
    }
    row = rows.get(ALICE)
    intake = harness.store.keyspace("intake")[1]
    seen = [key async for key in redis.scan_iter(f"{{{intake}}}:seen:*")]
    marks = await redis.mget(seen) if seen else []
    return Records(
        tokens=(row.input + row.output) if row else 0,
        turns=row.turns if row else 0,
        done=sum(1 for mark in marks if mark == b"done"),
    )


async def traces(harness: Harness, thread: ThreadKey) -> list[dict]:
    redis, prefix = harness.store.keyspace("trace")
    return [json.loads(text) for text in await TraceStore(redis, prefix=prefix).all(thread)]


def spent(metered: Metered) -> int:
    return metered.input + metered.output


async def test_a_mention_is_counted_traced_and_recorded_in_the_intake(app: Harness, metered: Metered) -> None:
    ts = await app.mention(QUESTION, user=ALICE)
    await app.settle()

    assert await records(app) == Records(tokens=spent(metered), turns=1, done=1)
    assert [trace["outcome"] for trace in await traces(app, app.thread_key(ts))] == ["answered"]


async def test_an_ask_is_counted_traced_and_recorded_in_the_intake(app: Harness, metered: Metered) -> None:
    await app.command(QUESTION, user=ALICE)
    await app.settle()

    [root] = [m for m in app.slack.messages.values() if m.channel == CHANNEL and m.thread_ts is None]
    assert QUESTION in root.text  # the question restated in the channel; the turn ran in its thread
    assert await records(app) == Records(tokens=spent(metered), turns=1, done=1)
    assert [trace["outcome"] for trace in await traces(app, app.thread_key(root.ts))] == ["answered"]


async def test_a_private_answer_is_counted_traced_and_recorded_in_the_intake(app: Harness, metered: Metered) -> None:
    await app.mention(QUESTION, user=ALICE)
    await app.settle()
    before, spent_before = await records(app), spent(metered)
    [offer] = [call for call in app.slack.calls_of("chat.postEphemeral") if call.get("user") == ALICE]
    [button] = [e for block in offer["blocks"] if block["type"] == "actions" for e in block["elements"]]

    await app.private_click(button["value"], user=ALICE)
    await app.settle()

    assert spent(metered) > spent_before  # the private answer called the model
    assert await records(app) == Records(tokens=spent(metered), turns=before.turns + 1, done=before.done + 1)
    [dm] = {call["channel"] for call in app.slack.calls_of("chat.postMessage") if call["channel"].startswith("D")}
    [root] = [m for m in app.slack.messages.values() if m.channel == dm and m.thread_ts is None]
    thread = ThreadKey(team=app.thread_key(root.ts).team, channel=dm, thread_ts=root.ts)
    [trace] = await traces(app, thread)
    assert trace["outcome"] == "answered" and trace["question"] is None  # a DM's trace keeps no words
