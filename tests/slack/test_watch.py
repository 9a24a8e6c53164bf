"""The watch: a thread whose answer cited a page that changed or went gets one note, posted once, with a button
that answers again from today's documents (issue 34)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.app.changes import documents_changed, index_changes
from bot.app.redis_client import RedisOptions
from bot.cli import main
from bot.config import ChannelPolicy
from bot.models import Chunk
from bot.retrieval.local import LocalRetriever
from bot.store.watch import Outbox
from bot.turns.watch import watch_changes
from bot.turns.watch_post import ACTION_ANSWER_AGAIN, NOTE_EVENT, post_notes
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.redis_cluster import ThreeNodeCluster
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL, POLICY, Harness

DOC = "refund_policy.pdf"
HOURS = "Our offices are open from nine to five on weekdays. Visitors sign in at the front desk."
REFUNDS = "Refunds are accepted within 30 days of purchase with the original receipt."
REFUNDS_NOW = "Refunds are accepted within 14 days of purchase, receipts no longer needed."


def chunk(page: int, text: str) -> Chunk:
    return Chunk(
        id=f"refund_policy-p{page}-0",
        file=DOC,
        page=page,
        container="benefits",
        text=text,
        doc_date=(datetime.now(UTC).date() - timedelta(days=3)).isoformat(),
    )


async def index(harness: Harness, *pages: str, fingerprint: str) -> list[Any]:
    """(Re-)index the document with these pages; the run's changes, as `folio index` computes them."""
    before = await harness.retriever.files("benefits")
    chunks = [chunk(number, text) for number, text in enumerate(pages, start=1)]
    await harness.retriever.replace_file("benefits", DOC, fingerprint, chunks, pages=len(pages))
    return index_changes(before, await harness.retriever.files("benefits"))


async def remove(harness: Harness) -> list[Any]:
    before = await harness.retriever.files("benefits")
    await harness.retriever.delete_file("benefits", DOC)
    return index_changes(before, await harness.retriever.files("benefits"))


@pytest.fixture
def index_path(tmp_path: Path) -> Path:
    return tmp_path / "index.sqlite"


@pytest.fixture
async def watched(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, index_path: Path
) -> AsyncIterator[Harness]:
    LocalRetriever(index_path)  # the app opens it; an empty index to start
    async with running_app(slack, fake_model, redis_url, index_path) as running:
        await index(running, HOURS, REFUNDS, fingerprint="v1")
        yield running


async def cited_thread(harness: Harness, *, channel: str = CHANNEL) -> str:
    """A thread whose answer cites page 2 (the refund page)."""
    harness.model.script(tools(search("refunds accepted within days receipt")), reply("Within 30 days [S1]."))
    ts = await harness.mention("How long do I have to ask for a refund?", channel=channel)
    await harness.settle()
    conversation = await harness.store.load(harness.thread_key(ts, channel))
    assert conversation is not None and conversation.turns[-1].citations[0].page == 2
    assert "refund_policy.pdf>, page 2 · benefits · updated 3 days ago" in harness.texts(ts, channel)[-1]
    return ts


def notes(harness: Harness, ts: str, channel: str = CHANNEL) -> list[Any]:
    return [m for m in harness.slack.thread(channel, ts) if m.metadata and m.metadata["event_type"] == NOTE_EVENT]


async def test_a_changed_cited_page_gets_one_note_and_its_button_answers_from_the_new_text(watched: Harness) -> None:
    ts = await cited_thread(watched)

    report = await documents_changed(await index(watched, HOURS, REFUNDS_NOW, fingerprint="v2"), folio=watched.folio)

    [note] = notes(watched, ts)
    assert "[1] refund_policy.pdf, page 2 changed on 2 Dec" in note.text
    assert "page 2 now reads “Refunds are accepted within 14 days" in note.text
    assert note.blocks[-1]["elements"][0]["text"]["text"] == "Answer again with today's documents"
    assert (report.run.threads, report.run.notes, report.posted, report.pending) == (1, 1, 1, 0)

    # The thread's earlier source S1 held the old words: forgotten, today's passage comes back as S2.
    watched.model.script(tools(search("refunds accepted within days receipt")), reply("Within 14 days now [S2]."))
    asked = len(watched.model.requests)
    await watched.click(ACTION_ANSWER_AGAIN, thread_ts=ts, message_ts=note.ts, turn=-1)
    await watched.settle()

    assert "14 days of purchase" in json.dumps(watched.model.requests[-1].body)  # searched today's text
    assert "30 days of purchase" not in json.dumps([r.body for r in watched.model.requests[asked:]])
    assert "Within 14 days now" in watched.texts(ts)[-1]
    conversation = await watched.store.load(watched.thread_key(ts))
    assert [turn.question for turn in conversation.turns] == ["How long do I have to ask for a refund?"] * 2


async def test_a_reindex_leaving_the_cited_passage_intact_posts_nothing(watched: Harness) -> None:
    ts = await cited_thread(watched)
    reworded = "Our offices open at nine and close at five, Monday to Friday."

    report = await documents_changed(await index(watched, reworded, REFUNDS, fingerprint="v2"), folio=watched.folio)
    moved = await documents_changed(
        await index(watched, reworded, "Contents", REFUNDS, fingerprint="v3"), folio=watched.folio
    )  # the same words on page 3: still stands

    assert notes(watched, ts) == []
    assert (report.run.threads, report.run.notes, moved.run.notes) == (1, 0, 0)


async def test_a_removed_document_gets_a_removed_note(watched: Harness) -> None:
    ts = await cited_thread(watched)

    await documents_changed(await remove(watched), folio=watched.folio)

    [note] = notes(watched, ts)
    assert "[1] refund_policy.pdf, page 2 was removed from the documents on 2 Dec" in note.text
    assert note.ts in (await watched.store.load(watched.thread_key(ts))).message_ts  # deleted with the thread


async def test_a_poster_that_died_leaves_its_note_to_the_next_run_which_posts_it_once(watched: Harness) -> None:
    ts = await cited_thread(watched)
    store, folio = watched.store, watched.folio
    assert folio is not None
    changes = await index(watched, HOURS, REFUNDS_NOW, fingerprint="v2")

    # Found and queued, then the process died before posting: nothing in the thread, the note waits.
    found = await watch_changes(changes, store=store, retriever=watched.retriever, policy=None, watch_days=30)
    assert found.notes == 1 and notes(watched, ts) == [] and await store.outbox().pending() == 1
    # The same changes found again (a re-run) queue nothing more.
    assert (
        await watch_changes(changes, store=store, retriever=watched.retriever, policy=None, watch_days=30)
    ).notes == 0

    assert await post_notes(store, folio.slack) == 1  # the next run
    assert await post_notes(store, folio.slack) == 0
    assert len(notes(watched, ts)) == 1


async def test_a_poster_that_died_after_posting_is_not_repeated(watched: Harness) -> None:
    ts = await cited_thread(watched)
    store, folio = watched.store, watched.folio
    assert folio is not None
    await watch_changes(
        await index(watched, HOURS, REFUNDS_NOW, fingerprint="v2"),
        store=store,
        retriever=watched.retriever,
        policy=None,
        watch_days=30,
    )
    outbox = store.outbox()
    claimed = await outbox.claim(lease=0.0)  # a poster took it, posted it, and died before saying so
    assert claimed is not None
    await folio.slack.chat_postMessage(
        channel=CHANNEL,
        thread_ts=ts,
        text=claimed.note.text,
        metadata={"event_type": NOTE_EVENT, "event_payload": {"note": claimed.note.id}},
    )

    assert await post_notes(store, folio.slack) == 0  # its lease over: found in the thread, not posted again
    assert len(notes(watched, ts)) == 1 and await outbox.pending() == 0
    replies = watched.slack.calls_of("conversations.replies")
    assert replies and str(replies[-1]["include_all_metadata"]).lower() in ("true", "1")


async def test_a_thread_older_than_the_watch_days_gets_nothing(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, index_path: Path
) -> None:
    LocalRetriever(index_path)
    async with running_app(slack, fake_model, redis_url, index_path, folio_watch_days=0) as harness:
        await index(harness, HOURS, REFUNDS, fingerprint="v1")
        ts = await cited_thread(harness)
        report = await documents_changed(
            await index(harness, HOURS, REFUNDS_NOW, fingerprint="v2"), folio=harness.folio
        )
        assert notes(harness, ts) == [] and report.run.threads == 0


async def test_a_channel_with_watching_off_gets_nothing(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, index_path: Path
) -> None:
    LocalRetriever(index_path)
    policy = {**POLICY, "channels": {CHANNEL: {"container": "benefits", "watch": False}}}
    async with running_app(slack, fake_model, redis_url, index_path, policy=policy) as harness:
        await index(harness, HOURS, REFUNDS, fingerprint="v1")
        ts = await cited_thread(harness)
        report = await documents_changed(
            await index(harness, HOURS, REFUNDS_NOW, fingerprint="v2"), folio=harness.folio
        )
        assert notes(harness, ts) == [] and (report.run.threads, report.run.notes) == (1, 0)


async def test_a_deleted_conversation_is_no_longer_found_and_outbox_keys_share_a_slot(watched: Harness) -> None:
    ts = await cited_thread(watched)
    thread = watched.thread_key(ts)
    found = await watched.store.threads_citing([("benefits", DOC)], since=0)
    assert found == {("benefits", DOC): [thread]}

    await watched.store.delete(thread)

    assert await watched.store.threads_citing([("benefits", DOC)], since=0) == {("benefits", DOC): []}
    assert len({key.split("}")[0] for key in vars(Outbox(None, prefix="p")).values() if isinstance(key, str)}) == 1  # type: ignore[arg-type]


async def test_folio_watch_lists_the_runs_and_posts_what_waits(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    index_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    redis = Redis.from_url(redis_url)
    await redis.delete(*[key async for key in redis.scan_iter("{folio:watch}:*")] or ["-"])  # the CLI's prefix
    await redis.aclose()
    LocalRetriever(index_path)
    async with running_app(slack, fake_model, redis_url, index_path, prefix="folio") as harness:
        await index(harness, HOURS, REFUNDS, fingerprint="v1")
        ts = await cited_thread(harness)
        await documents_changed(await index(harness, HOURS, REFUNDS_NOW, fingerprint="v2"), folio=harness.folio)
        # a syncer without a Slack token: found and queued, not posted
        await watch_changes(
            await remove(harness), store=harness.store, retriever=harness.retriever, policy=None, watch_days=30
        )

        for name, value in (
            ("REDIS_URL", redis_url),
            ("SLACK_BOT_TOKEN", "xoxb-test-token"),
            ("SLACK_API_URL", slack.base_url),
            ("FOLIO_SAMPLE_CORPUS", "false"),
        ):
            monkeypatch.setenv(name, value)
        assert await asyncio.to_thread(main, ["watch", "--post", "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert (printed["posted_now"], printed["pending"]) == (1, 0)
        [run] = printed["runs"]
        assert (run["documents"], run["threads"], run["notes"], run["posted"]) == (1, 1, 1, 1)
        assert [note.text.splitlines()[-1].split(" on ")[0] for note in notes(harness, ts)] == [
            "• [1] refund_policy.pdf, page 2 changed",
            "• [1] refund_policy.pdf, page 2 was removed from the documents",
        ]

        assert await asyncio.to_thread(main, ["watch"]) == 0
        table = capsys.readouterr().out.splitlines()
        assert table[0].split() == ["run", "(UTC)", "documents", "threads", "notes", "posted"]
        assert table[1].split()[2:] == ["1", "1", "1", "1"] and table[-1] == "No note waits to be posted."


async def test_a_serving_worker_posts_the_notes_left_waiting_as_it_starts(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, index_path: Path
) -> None:
    LocalRetriever(index_path)
    async with running_app(slack, fake_model, redis_url, index_path, prefix="watch-serve") as harness:
        await index(harness, HOURS, REFUNDS, fingerprint="v1")
        ts = await cited_thread(harness)
        await watch_changes(
            await remove(harness), store=harness.store, retriever=harness.retriever, policy=None, watch_days=30
        )  # a syncer without a Slack token
        assert notes(harness, ts) == []
    async with running_app(slack, fake_model, redis_url, index_path, prefix="watch-serve") as restarted:
        await restarted.settle()
        assert len(notes(restarted, ts)) == 1 and await restarted.store.outbox().pending() == 0


async def test_a_thread_whose_channel_no_longer_reaches_the_document_is_told_only_that_a_source_is_gone(
    watched: Harness,
) -> None:
    ts = await cited_thread(watched)
    today = ChannelPolicy.model_validate({**POLICY, "channels": {CHANNEL: {"container": "legal"}}})
    changes = await index(watched, HOURS, REFUNDS_NOW, fingerprint="v2")

    await watch_changes(changes, store=watched.store, retriever=watched.retriever, policy=today, watch_days=30)
    assert watched.folio is not None and await post_notes(watched.store, watched.folio.slack) == 1

    [note] = notes(watched, ts)
    assert note.text == "A source an answer here relied on is no longer available."


@pytest.mark.slow  # three redis-server processes
async def test_the_watch_on_a_redis_cluster_finds_notes_posts_once_and_forgets_deleted_threads(
    tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses, redis_url: str, index_path: Path
) -> None:
    LocalRetriever(index_path)
    with ThreeNodeCluster(tmp_path / "cluster") as cluster:
        async with running_app(
            slack,
            fake_model,
            redis_url,
            index_path,
            redis=cluster.url,
            redis_options=RedisOptions(cluster=True),
            prefix="watched",
        ) as harness:
            assert harness.store.cluster
            await index(harness, HOURS, REFUNDS, fingerprint="v1")
            ts = await cited_thread(harness)

            report = await documents_changed(await remove(harness), folio=harness.folio)

            assert (report.run.notes, report.posted, report.pending) == (1, 1, 0) and len(notes(harness, ts)) == 1
            await harness.store.delete(harness.thread_key(ts))
            assert await harness.store.threads_citing([("benefits", DOC)], since=0) == {("benefits", DOC): []}
