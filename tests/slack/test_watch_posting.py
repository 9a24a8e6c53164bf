"""Posting the watch's notes: a post slower than its lease is not posted twice, and `folio serve`'s timer posts the
notes left waiting (a syncer without a Slack token, a poster that died) without two workers posting one note."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.changes import documents_changed
from bot.cli import main
from bot.retrieval.local import LocalRetriever
from bot.store.watch import Note, Outbox
from bot.turns.watch import watch_changes
from bot.turns.watch_post import NOTE_EVENT, post_notes, posting_every
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import Harness, wait_until
from tests.slack.test_watch import HOURS, REFUNDS, REFUNDS_NOW, cited_thread, index, notes


@pytest.fixture
async def watched(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, tmp_path: Path
) -> AsyncIterator[Harness]:
    LocalRetriever(tmp_path / "index.sqlite")  # the app opens it; an empty index to start
    async with running_app(slack, fake_model, redis_url, tmp_path / "index.sqlite") as running:
        await index(running, HOURS, REFUNDS, fingerprint="v1")
        yield running


async def queued(harness: Harness) -> str:
    """A thread whose note was found and queued by a syncer without a Slack token: nothing in the thread yet."""
    ts = await cited_thread(harness)
    changes = await index(harness, HOURS, REFUNDS_NOW, fingerprint="v2")
    found = await watch_changes(changes, store=harness.store, retriever=harness.retriever, policy=None, watch_days=30)
    assert found.notes == 1 and notes(harness, ts) == []
    return ts


async def test_a_post_slower_than_its_lease_is_not_posted_twice(watched: Harness) -> None:
    ts = await queued(watched)
    assert watched.folio is not None
    slack = watched.folio.slack
    watched.slack.slow["chat.postMessage"] = 1.5  # Slack takes the post two and a half leases after it was sent

    first = asyncio.create_task(post_notes(watched.store, slack, lease=0.6))
    await asyncio.sleep(0.8)  # the first poster's lease would have lapsed: a second poster comes
    second = await post_notes(watched.store, slack, lease=0.6)

    assert (await first, second) == (1, 0)
    assert len(notes(watched, ts)) == 1 and await watched.store.outbox().pending() == 0


async def test_the_timer_posts_a_note_left_waiting_and_two_workers_post_each_note_once(watched: Harness) -> None:
    ts = await queued(watched)
    assert watched.folio is not None
    slack = watched.folio.slack
    watched.slack.slow["chat.postMessage"] = 0.3  # each sweep is caught mid-post by the other worker's

    async with posting_every(watched.store, slack, seconds=0.05), posting_every(watched.store, slack, seconds=0.05):
        await wait_until(lambda: notes(watched, ts), timeout=5)
        await asyncio.sleep(0.5)  # several more sweeps of both workers

    assert len(notes(watched, ts)) == 1 and await watched.store.outbox().pending() == 0
    posts = [call for call in watched.slack.calls_of("chat.postMessage") if NOTE_EVENT in json.dumps(call)]
    assert len(posts) == 1  # not posted and then deleted or hidden: asked of Slack once


async def test_the_timer_is_off_at_zero_and_stops_with_the_block(watched: Harness) -> None:
    await queued(watched)
    assert watched.folio is not None
    async with posting_every(watched.store, watched.folio.slack, seconds=0):
        await asyncio.sleep(0.2)
    assert await watched.store.outbox().pending() == 1
    async with posting_every(watched.store, watched.folio.slack, seconds=0.05):
        pass  # left before its first sweep: nothing posted, nothing left running
    assert await watched.store.outbox().pending() == 1
    assert [task for task in asyncio.all_tasks() if "timer" in task.get_name()] == []


async def test_a_timer_whose_slack_cannot_be_reached_keeps_the_note_and_stops_cleanly(
    watched: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    await queued(watched)
    unreachable = AsyncWebClient(token="xoxb-test-token", base_url="http://127.0.0.1:9/api/", timeout=1)

    async with posting_every(watched.store, unreachable, seconds=0.05):
        await wait_until(lambda: "watch notes not posted now" in caplog.text, timeout=5)
        await asyncio.sleep(0.2)  # it goes on sweeping: the note, leased by the failed post, is not retried at once

    assert caplog.text.count("watch notes not posted now") == 1 and await watched.store.outbox().pending() == 1
    assert "Traceback" not in caplog.text  # said in one line, with the cause


async def test_a_sync_whose_slack_cannot_be_reached_keeps_its_note_and_its_own_result(watched: Harness) -> None:
    ts = await cited_thread(watched)
    assert watched.folio is not None
    unreachable = AsyncWebClient(token="xoxb-test-token", base_url="http://127.0.0.1:9/api/", timeout=1)
    folio = dataclasses.replace(watched.folio, slack=unreachable)

    report = await documents_changed(await index(watched, HOURS, REFUNDS_NOW, fingerprint="v2"), folio=folio)

    assert report.posted == 0 and notes(watched, ts) == [] and await watched.store.outbox().pending() == 1


async def test_folio_watch_post_with_slack_unreachable_says_so_in_one_line_and_keeps_the_note(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    redis = Redis.from_url(redis_url)
    await redis.delete(*[key async for key in redis.scan_iter("{folio:watch}:*")] or ["-"])  # the CLI's prefix
    note = Note(id="b" * 24, team="T0FOLIO01", channel="C0BENEFIT1", thread_ts="1800.000001", text="Changed.")
    assert await Outbox(redis, prefix="folio").add(note)
    for name, value in (
        ("REDIS_URL", redis_url),
        ("SLACK_BOT_TOKEN", "xoxb-test-token"),
        ("SLACK_API_URL", "http://127.0.0.1:9/api/"),
        ("FOLIO_SAMPLE_CORPUS", "false"),
    ):
        monkeypatch.setenv(name, value)

    assert await asyncio.to_thread(main, ["watch", "--post"]) == 2

    said = capsys.readouterr().err
    last = said.strip().splitlines()[-1]  # after slack_sdk's own INFO line about its retry
    assert last.startswith("folio: ") and "SLACK_API_URL" in last and "127.0.0.1:9" in last
    assert "Traceback" not in said
    assert await Outbox(redis, prefix="folio").pending() == 1
    await redis.aclose()
