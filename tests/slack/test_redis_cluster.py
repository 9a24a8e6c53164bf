"""Folio on a real three-node Redis Cluster (REDIS_CLUSTER=true, redis-py's cluster client), started on loopback in
the test: the whole Slack turn path, two replies in one thread in order, deletion, and a node restarted mid-run."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio.cluster import RedisCluster

from bot import messages
from bot.app.redis_client import RedisOptions
from bot.errors import StoreUnavailable
from bot.slack.render import ACTION_DELETE
from bot.store.keys import thread_keys
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack
from tests.redis_cluster import ThreeNodeCluster
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, Harness, wait_until

pytestmark = pytest.mark.slow  # three redis-server processes, about two seconds to form the cluster

CLUSTER = RedisOptions(cluster=True)
QUESTION = "What protection is there against balance billing?"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[ThreeNodeCluster]:
    with ThreeNodeCluster(tmp_path / "cluster") as running:
        yield running


async def keys_of(cluster: ThreeNodeCluster, prefix: str) -> list[str]:
    """Every key under `prefix`, on every node."""
    client = RedisCluster.from_url(cluster.url)
    try:
        return sorted([key.decode() async for key in client.scan_iter(match=f"{prefix}*")])
    finally:
        await client.aclose()


async def test_a_thread_on_a_cluster_is_answered_continued_in_order_and_deleted(
    cluster: ThreeNodeCluster, slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    async with running_app(
        slack, fake_model, redis_url, corpus_index, redis=cluster.url, redis_options=CLUSTER, prefix="clustered"
    ) as harness:
        assert harness.store.cluster
        harness.model.script(tools(search("balance billing protection")), reply("You are protected [S1]."))
        ts = await harness.mention(QUESTION)
        await harness.settle()
        [answer] = harness.texts(ts)
        assert "You are protected <https://docs.example/" in answer and "#page=" in answer

        harness.model.script(reply("First follow-up [S1].", latency=0.3), reply("Second follow-up [S1]."))
        await asyncio.gather(
            harness.message("And for specialists?", thread_ts=ts), harness.message("And for labs?", thread_ts=ts)
        )
        await harness.settle()
        first, second = harness.model.requests[-2], harness.model.requests[-1]
        assert second.body["previous_response_id"] != first.body["previous_response_id"]
        conversation = await harness.store.load(harness.thread_key(ts))
        assert conversation is not None
        assert [turn.answer for turn in conversation.turns][1:] == ["First follow-up [1].", "Second follow-up [1]."]
        thread = thread_keys("clustered", harness.thread_key(ts))
        spread = {cluster.node_of(key) for key in await keys_of(cluster, "clustered")}
        assert len(spread) > 1  # the test means something: Folio's keys live on several nodes

        created = harness.model.stored_ids()
        [root, *_] = harness.slack.thread(CHANNEL, ts)
        await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=root.ts)
        await harness.settle()

        assert harness.texts(ts) == [] and harness.model.stored_ids() == []
        assert sorted(harness.model.deleted) == sorted(created)
        assert harness.ephemeral() == [messages.deleted(messages=3, responses=len(created))]
        left = await keys_of(cluster, "clustered")
        assert not {thread.conversation, thread.responses, thread.traces} & set(left)


async def outage_then_back(harness: Harness, cluster: ThreeNodeCluster, node: int) -> tuple[str, int]:
    """Kill `node`, send a mention (Slack gets an answer to its delivery), start the node again, and deliver the
    event once more as Slack's retry does; the mention's ts and the first delivery's HTTP status."""
    cluster.kill(node)
    ts = "1800000099.000001"
    event = {
        "type": "app_mention",
        "channel": CHANNEL,
        "user": ALICE,
        "text": f"<@{BOT_USER}> {QUESTION}",
        "ts": ts,
        "team": TEAM,
    }
    status = await harness.event(event, event_id="EvOutage1")
    await harness.settle()
    with pytest.raises(StoreUnavailable):  # /readyz: 503, naming Redis
        await harness.store.ping()
    cluster.start(node)
    await asyncio.to_thread(cluster.wait_ok)
    assert await harness.event(event, event_id="EvOutage1", retry=1) == 200
    await harness.settle()
    return ts, status


async def test_a_node_restarted_mid_run_loses_no_turn_in_silence_and_the_next_turn_works(
    cluster: ThreeNodeCluster, slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    async with running_app(
        slack,
        fake_model,
        redis_url,
        corpus_index,
        redis=cluster.url,
        redis_options=CLUSTER,
        prefix="restarted",
        lock_lease=2,
    ) as harness:
        harness.model.script(tools(search("balance billing")), reply("Before [S1]."))
        before = await harness.mention(QUESTION)
        await harness.settle()
        assert "Before" in harness.texts(before)[0]

        intake = cluster.node_of("{restarted:intake}:due")
        harness.model.script(tools(search("balance billing")), reply("During [S1]."))
        ts, status = await outage_then_back(harness, cluster, intake)
        await harness.store.ping()  # ready again

        assert status == 500  # not acknowledged: Slack delivers it again, and nothing is lost
        assert any("During" in text for text in harness.texts(ts))

        thread = cluster.node_of(thread_keys("restarted", harness.thread_key(ts)).conversation)
        harness.model.script(reply("Cut short [S1].", latency=1.0))
        await harness.message("And in the middle?", thread_ts=ts)
        await wait_until(lambda: len(harness.model.requests) == 5)  # the turn runs: its model call is under way
        cluster.kill(thread)  # the thread's node: its conversation, lock and response set
        await asyncio.sleep(1.5)
        cluster.start(thread)
        await asyncio.to_thread(cluster.wait_ok)
        await harness.settle()
        assert harness.texts(ts)[-1] == messages.STORE_DOWN  # the person is told; the answer is not half-saved

        harness.model.script(reply("After [S1]."))
        await harness.message("And after?", thread_ts=ts)
        await harness.settle()
        assert "After" in harness.texts(ts)[-1]
