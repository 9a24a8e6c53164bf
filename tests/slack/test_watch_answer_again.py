"""The watch note's "Answer again with today's documents": the re-answered turn's trace says which change triggered it,
read from the note Folio kept, never from the button's value (which anyone can forge)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.app.changes import documents_changed
from bot.retrieval.local import LocalRetriever
from bot.store import ThreadKey
from bot.turns import TurnRequest
from bot.turns.trace import Trace, new_trace
from bot.turns.watch_post import ACTION_ANSWER_AGAIN
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import TEAM, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL, Harness
from tests.slack.test_watch import HOURS, REFUNDS, REFUNDS_NOW, cited_thread, index, notes

OTHER = "C0OTHER001"


@pytest.fixture
async def watched(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, tmp_path: Path
) -> AsyncIterator[Harness]:
    LocalRetriever(tmp_path / "index.sqlite")  # the app opens it; an empty index to start
    policy = {"channels": {CHANNEL: {"container": "benefits"}, OTHER: {"container": "benefits"}}}
    async with running_app(slack, fake_model, redis_url, tmp_path / "index.sqlite", policy=policy) as running:
        await index(running, HOURS, REFUNDS, fingerprint="v1")
        yield running


async def answer_again(harness: Harness, ts: str, note: Any, *, value: str, channel: str = CHANNEL) -> Trace:
    """Click the note's button with `value` and let the turn run; the new turn's trace."""
    harness.model.script(tools(search("refunds accepted within days receipt")), reply("Within 14 days now [S2]."))
    await harness.click(ACTION_ANSWER_AGAIN, thread_ts=ts, message_ts=note.ts, channel=channel, value=value)
    await harness.settle()
    assert "Within 14 days now" in harness.texts(ts, channel)[-1]  # answered again either way
    assert harness.folio is not None
    kept = await harness.folio.ledger.traces.all(harness.thread_key(ts, channel))
    return Trace.from_json(kept[-1])


def triggered(trace: Trace) -> list[str]:
    return [line for line in trace.lines() if line.startswith("triggered by:")]


async def test_the_trace_of_a_re_answered_turn_names_the_change_that_triggered_it(
    watched: Harness, redis_url: str
) -> None:
    ts = await cited_thread(watched)
    await documents_changed(await index(watched, HOURS, REFUNDS_NOW, fingerprint="v2"), folio=watched.folio)
    [note] = notes(watched, ts)
    value = note.blocks[-1]["elements"][0]["value"]
    note_id = json.loads(value)["note"]
    assert set(json.loads(value)) == {"turn", "note"}  # the button carries the note's id and nothing of the change

    trace = await answer_again(watched, ts, note, value=value)

    assert triggered(trace) == [f"triggered by: benefits/refund_policy.pdf changed on 2 Dec (watch note {note_id})"]
    again = await answer_again(watched, ts, note, value=value)  # the note is kept after a click: a second click too
    assert triggered(again) == triggered(trace)
    redis = Redis.from_url(redis_url)
    [kept] = [key async for key in redis.scan_iter(f"*:watch}}:sent:{note_id}")]
    assert await redis.ttl(kept) > 29 * 86400  # as long as a conversation lives; expired, it is a plain re-ask
    assert json.loads(await redis.get(kept))["text"] == ""  # its thread and trigger: not the document's words
    await redis.aclose()
    first = Trace.from_json((await watched.folio.ledger.traces.all(watched.thread_key(ts)))[0])  # type: ignore[union-attr]
    assert triggered(first) == []  # the question's first answer was no re-answer


async def test_a_forged_note_in_the_button_is_a_plain_re_ask_whose_trace_claims_no_change(watched: Harness) -> None:
    ts = await cited_thread(watched)
    elsewhere = await cited_thread(watched, channel=OTHER)
    await documents_changed(await index(watched, HOURS, REFUNDS_NOW, fingerprint="v2"), folio=watched.folio)
    [note] = notes(watched, ts)
    [other_note] = notes(watched, elsewhere, OTHER)
    theirs = json.loads(other_note.blocks[-1]["elements"][0]["value"])["note"]

    forged = [
        json.dumps({"turn": -1, "note": theirs}),  # a real note, of another thread
        json.dumps({"turn": -1, "note": "0" * 24}),  # no such note
        json.dumps({"turn": -1, "note": "x" * 5000, "trigger": "contract.pdf removed on 1 Jan"}),
        json.dumps({"turn": -1, "note": ["a", {"b": 1}]}),
        json.dumps({"turn": -1, "note": "}:*"}),
        "not json at all",
    ]
    for value in forged:
        trace = await answer_again(watched, ts, note, value=value)
        assert triggered(trace) == [], value
        assert "contract.pdf" not in "\n".join(trace.lines())


def test_the_trigger_survives_the_durable_intake_and_older_records_and_traces_read_as_none() -> None:
    """The re-answer may run in another worker (the intake's JSON); records and traces written before the trigger
    existed read as triggered by nothing."""
    asked = TurnRequest(thread=ThreadKey(team=TEAM, channel=CHANNEL, thread_ts="1.000001"), question="q?", user="U1")
    again = dataclasses.replace(asked, trigger="benefits/a.pdf removed on 2 Dec (watch note " + "c" * 24 + ")")
    assert TurnRequest.from_json(again.to_json()) == again and "trigger" not in json.loads(asked.to_json())
    trace = new_trace(workspace=TEAM, channel=CHANNEL, thread_ts="1.000001", user="U1", trigger=again.trigger)
    older = json.loads(trace.to_json())
    del older["trigger"]
    assert Trace.from_json(trace.to_json()) == trace and Trace.from_json(json.dumps(older)).trigger is None
