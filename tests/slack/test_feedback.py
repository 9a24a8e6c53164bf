"""Feedback that closes the loop: native 👍 / 👎 under every answer, a 👎 form asking why, the verdict kept with the
answer it judges, listed by `folio feedback` and exported as golden lines `folio eval` reads."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot import messages
from bot.cli import main
from bot.cli.feedback import feedback_records, format_record
from bot.config import Settings
from bot.evaluation.feedback_export import golden_lines
from bot.evaluation.golden import parse_golden
from bot.slack.render import ACTION_DELETE
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import BOB, CHANNEL, Harness

QUESTION = "What protection is there against balance billing?"
OUTDATED = {
    "reason": {
        "reason": {
            "type": "radio_buttons",
            "selected_option": {"text": {"type": "plain_text", "text": "Outdated"}, "value": "outdated"},
        }
    },
    "comment": {"comment": {"type": "plain_text_input", "value": "That changed in 2026."}},
}


async def answered_thread(harness: Harness) -> tuple[str, str]:
    harness.model.script(tools(search("balance billing protection")), reply("You are protected [S1]."))
    ts = await harness.mention(QUESTION)
    await harness.settle()
    return ts, harness.slack.thread(CHANNEL, ts)[-1].ts


async def test_every_answer_carries_slacks_native_feedback_buttons(harness: Harness) -> None:
    ts, _ = await answered_thread(harness)

    [answer] = [m for m in harness.slack.thread(CHANNEL, ts) if m.ts != ts]
    [block] = [block for block in answer.blocks if block["type"] == "context_actions"]
    [buttons] = block["elements"]
    assert buttons["type"] == "feedback_buttons" and buttons["action_id"] == "folio_feedback"
    assert (buttons["positive_button"]["value"], buttons["negative_button"]["value"]) == ("helpful:0", "not_helpful:0")


async def test_a_thumbs_down_opens_a_form_and_its_reason_is_kept_with_the_answer(harness: Harness) -> None:
    ts, answer_ts = await answered_thread(harness)

    assert await harness.feedback("not_helpful", thread_ts=ts, message_ts=answer_ts) == 200
    await harness.settle()
    [form] = harness.slack.modals
    assert form["title"]["text"] == "What was wrong?"
    assert [o["value"] for o in form["blocks"][0]["element"]["options"]] == ["wrong", "outdated", "source", "other"]
    assert await harness.submit(form, OUTDATED) == 200
    await harness.settle()

    [record] = await feedback_records(Settings(), since=None, channel=None, store=harness.feedback_records)
    assert (record.rating, record.reason, record.comment) == ("not_helpful", "outdated", "That changed in 2026.")
    assert record.question == QUESTION and record.answer == "You are protected [1]."
    assert record.containers == ("benefits",) and record.profile == "fast" and record.pages
    assert harness.ephemeral() == [messages.FEEDBACK_THANKS]
    assert '👎 outdated "That changed in 2026."' in format_record(record)


async def test_the_last_click_wins_and_each_person_has_their_own(harness: Harness) -> None:
    ts, answer_ts = await answered_thread(harness)

    await harness.feedback("not_helpful", thread_ts=ts, message_ts=answer_ts)
    await harness.settle()
    await harness.feedback("helpful", thread_ts=ts, message_ts=answer_ts)
    await harness.feedback("not_helpful", thread_ts=ts, message_ts=answer_ts, user=BOB)
    await harness.settle()

    records = await feedback_records(Settings(), since=None, channel=None, store=harness.feedback_records)
    assert sorted((r.user, r.rating) for r in records) == [("U0ALICE01", "helpful"), (BOB, "not_helpful")]
    assert await feedback_records(Settings(), since=None, channel="C0OTHER001", store=harness.feedback_records) == []


async def test_feedback_exports_as_golden_lines_that_eval_reads(harness: Harness, tmp_path: Path) -> None:
    ts, answer_ts = await answered_thread(harness)
    await harness.feedback("helpful", thread_ts=ts, message_ts=answer_ts)
    await harness.feedback("not_helpful", thread_ts=ts, message_ts=answer_ts, user=BOB)
    await harness.settle()
    await harness.submit(harness.slack.modals[0], OUTDATED, user=BOB)
    await harness.settle()

    records = await feedback_records(Settings(), since=None, channel=None, store=harness.feedback_records)
    lines = golden_lines(sorted(records, key=lambda r: r.rating))  # helpful first
    [question] = parse_golden(lines)  # eval skips the 👎 until its truth is written

    assert question.question == QUESTION and question.pages
    assert question.truth == "You are protected. [Northwind_Standard_Benefits_Details.pdf#page=7]"
    review = json.loads(lines[1])
    assert review["review"] is True and review["feedback"]["reason"] == "outdated"
    assert review["feedback"]["answer"] == "You are protected [1]."


async def test_deleting_the_conversation_deletes_its_feedback(harness: Harness) -> None:
    ts, answer_ts = await answered_thread(harness)
    await harness.feedback("helpful", thread_ts=ts, message_ts=answer_ts)
    await harness.settle()

    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=answer_ts)
    await harness.settle()

    assert await feedback_records(Settings(), since=None, channel=None, store=harness.feedback_records) == []


async def test_folio_feedback_lists_and_exports_what_people_said(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with running_app(slack, fake_model, redis_url, corpus_index, prefix="folio") as harness:  # `serve`'s keys
        ts, answer_ts = await answered_thread(harness)
        await harness.feedback("not_helpful", thread_ts=ts, message_ts=answer_ts)
        await harness.settle()
        await harness.submit(slack.modals[0], OUTDATED)
        await harness.settle()
    monkeypatch.setenv("REDIS_URL", redis_url)
    today = datetime.now(UTC).date().isoformat()

    assert await asyncio.to_thread(main, ["feedback", "--since", today, "--channel", CHANNEL]) == 0
    listed = capsys.readouterr().out
    assert f'{CHANNEL}  U0ALICE01  👎 outdated "That changed in 2026."' in listed and f"Q: {QUESTION}" in listed
    golden = tmp_path / "feedback.jsonl"
    assert await asyncio.to_thread(main, ["feedback", "--since", today, "export", str(golden)]) == 0
    [line] = [json.loads(text) for text in golden.read_text().splitlines() if QUESTION in text]
    assert line["review"] is True and line["feedback"]["comment"] == "That changed in 2026."


async def test_folio_feedback_outdated_lists_the_documents_flagged_with_their_threads(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    redis = Redis.from_url(redis_url)
    await redis.delete(*[key async for key in redis.scan_iter("folio:feedback:*")] or ["-"])  # other tests' verdicts
    await redis.aclose()
    async with running_app(slack, fake_model, redis_url, corpus_index, prefix="folio") as harness:  # `serve`'s keys
        ts, answer_ts = await answered_thread(harness)
        await harness.feedback("not_helpful", thread_ts=ts, message_ts=answer_ts)
        await harness.settle()
        await harness.submit(slack.modals[0], OUTDATED)
        await harness.feedback("not_helpful", thread_ts=ts, message_ts=answer_ts, user=BOB)  # 👎, another reason
        await harness.settle()
        await harness.submit(
            slack.modals[1],
            {**OUTDATED, "reason": {"reason": {"type": "radio_buttons", "selected_option": {"value": "wrong"}}}},
            user=BOB,
        )
        await harness.settle()
        cited = (await harness.store.load(harness.thread_key(ts))).turns[0].citations[0]
    monkeypatch.setenv("REDIS_URL", redis_url)

    assert await asyncio.to_thread(main, ["feedback", "--outdated", "--json"]) == 0
    flagged = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    [mine] = [item for item in flagged if f"{CHANNEL}:{ts}" in item["threads"]]
    assert (mine["container"], mine["file"], mine["times"], mine["pages"]) == (
        cited.container,
        cited.file,
        1,
        [cited.page],
    )
    assert await asyncio.to_thread(main, ["feedback", "--outdated"]) == 0
    assert f"× {cited.container}/{cited.file} (page {cited.page}), last " in capsys.readouterr().out
