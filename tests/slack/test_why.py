""" "Why this answer?": every turn keeps a trace; an admin opens it from the answer's overflow menu (or with
`folio trace`), anyone else is refused, forged payloads included."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from bot.cli import main
from bot.slack.render import ACTION_DELETE, ACTION_MORE
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, search, tools
from tests.fakes.slack_api import TEAM, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ADMIN, BOB, CHANNEL, POLICY, Harness

ADMINS_POLICY = {**POLICY, "admins": [ADMIN]}


def answering(request: Request) -> Step:
    """A search, then an answer citing a source it was shown (S1) and one it was not (S9)."""
    if request.depth == 0:
        return tools(search("balance billing protection"))
    return reply("You are protected [S1], and also [S9].")


async def choose_why(app: Harness, *, user: str, thread_ts: str, message_ts: str, turn: int = 0) -> None:
    """The overflow menu's "Why this answer?" as Slack posts it (anyone can post this payload)."""
    payload = {
        "type": "block_actions", "user": {"id": user, "team_id": TEAM}, "api_app_id": "A0FOLIO01", "token": "legacy",
        "trigger_id": f"tr.why.{time.monotonic_ns()}", "team": {"id": TEAM, "domain": "folio-test"},
        "container": {"type": "message", "message_ts": message_ts, "channel_id": CHANNEL, "thread_ts": thread_ts},
        "channel": {"id": CHANNEL, "name": "benefits"},
        "message": {"type": "message", "ts": message_ts, "thread_ts": thread_ts, "bot_id": "BFOLIO01", "text": ""},
        "response_url": app.slack.response_url("action"),
        "actions": [{"action_id": ACTION_MORE, "block_id": "b1", "type": "overflow", "action_ts": str(time.time()),
                     "selected_option": {"text": {"type": "plain_text", "text": "Why this answer? (admins)"},
                                         "value": json.dumps({"turn": turn, "do": "why"})}}],
    }  # fmt: skip
    await app.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    await app.settle()


def offers_why(blocks: object) -> list[str]:
    """Every trace of "Why this answer?" in a message's or a view's blocks: its words or one of its action ids."""
    text = json.dumps(blocks)
    return [each for each in ("Why this answer", ACTION_MORE, "folio_why") if each in text]


@pytest.mark.parametrize("streaming", [False, True], ids=["posted", "streamed"])
async def test_no_answer_offers_why_this_answer_to_anyone(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, streaming: bool
) -> None:
    """Slack shows a message alike to everyone in the channel: an admins' item there is seen by all."""
    fake_model.respond_with(answering)
    async with running_app(
        slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY, streaming=streaming
    ) as app:
        ts = await app.mention("What protection is there against balance billing?")
        await app.settle()
        answers = [message for message in slack.thread(CHANNEL, ts) if message.blocks]

    assert answers and "Delete" in json.dumps(answers[-1].blocks)  # the answer's own buttons are there
    assert [offers_why(view.blocks) for message in answers for view in slack.views_of(CHANNEL, message.ts)] == [
        [] for message in answers for _ in slack.views_of(CHANNEL, message.ts)
    ]


async def test_an_admin_sees_the_searches_sources_scores_and_removed_citations_of_the_turn(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_model.respond_with(answering)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY, prefix="folio") as app:
        ts = await app.mention("What protection is there against balance billing?")
        await app.settle()
        [answer] = slack.thread(CHANNEL, ts)
        assert "Why this answer? (admins)" in json.dumps(answer.blocks)

        await choose_why(app, user=BOB, thread_ts=ts, message_ts=answer.ts)  # a forged payload from a non-admin
        assert slack.calls_of("views.open") == []
        assert app.ephemeral(BOB) == [
            "Only Folio's admins can see why an answer said what it said (`admins:` in channels.yaml)."
        ]

        await choose_why(app, user=ADMIN, thread_ts=ts, message_ts=answer.ts)

    [opened] = slack.calls_of("views.open")
    view = opened["view"] if isinstance(opened["view"], dict) else json.loads(opened["view"])
    shown = "\n".join(block["text"]["text"] for block in view["blocks"])
    assert view["title"]["text"] == "Why this answer?"
    assert "- search: Searching: balance billing protection" in shown
    assert "S1 " in shown and ".pdf p. " in shown and " score " in shown and "[benefits]" in shown
    assert "removed citations: [S9]: named no source the model was shown" in shown
    assert "tokens 120 in (0 cached) / 30 out" in shown
    assert "question: What protection is there against balance billing?" in shown  # the channel saw it anyway

    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("FOLIO_SAMPLE_CORPUS", "false")
    link = f"https://folio-test.slack.com/archives/{CHANNEL}/p{ts.replace('.', '')}"
    assert await asyncio.to_thread(main, ["trace", link]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("== turn 1\n") and "- search: Searching: balance billing protection" in printed
    assert "named no source the model was shown" in printed


async def test_a_direct_message_trace_keeps_the_searches_but_not_the_words(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY) as app:
        ts = await app.message("Balance billing?", channel="D0ALICE001", channel_type="im")
        await app.settle()
        traces = await app.folio.ledger.traces.all(app.thread_key(ts, channel="D0ALICE001"))

    [trace] = [json.loads(text) for text in traces]
    assert trace["question"] is None and trace["answer"] is None
    assert any(step["title"] == "Searching: balance billing protection" for step in trace["steps"])


async def test_deleting_the_conversation_deletes_its_traces(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY) as app:
        ts = await app.mention("Balance billing?")
        await app.settle()
        thread, [answer] = app.thread_key(ts), slack.thread(CHANNEL, ts)
        kept = await app.folio.ledger.traces.all(thread)
        await app.click(ACTION_DELETE, thread_ts=ts, message_ts=answer.ts)
        await app.settle()

        assert len(kept) == 1 and await app.folio.ledger.traces.all(thread) == []


async def test_an_admin_through_a_user_group_sees_the_trace(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    slack.add_usergroup("S0ADMINS01", "it-admins", [BOB])
    async with running_app(
        slack, fake_model, redis_url, corpus_index, policy={**POLICY, "admins": ["it-admins"]}
    ) as app:
        ts = await app.mention("Balance billing?")
        await app.settle()
        [answer] = slack.thread(CHANNEL, ts)
        await choose_why(app, user=BOB, thread_ts=ts, message_ts=answer.ts)

    [opened] = slack.calls_of("views.open")
    view = opened["view"] if isinstance(opened["view"], dict) else json.loads(opened["view"])
    assert "- search: Searching: balance billing protection" in "\n".join(b["text"]["text"] for b in view["blocks"])
    assert app.ephemeral(BOB) == []
