"""Failure is never silent: every error ends in a message in the thread, and the progress indicator is cleared."""

from __future__ import annotations

import json
from pathlib import Path

from bot import messages
from tests.fakes.openai_responses import FakeResponses, error, reply, search, tools
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, Harness, sign

QUESTION = "What protection is there against balance billing?"


def status_cleared(harness: Harness) -> bool:
    """No thread shows a status line any more (cleared, or replaced by Folio's reply)."""
    return not any(harness.slack.statuses.values())


async def test_when_the_model_fails_the_thread_gets_quoted_passages_and_says_why(harness: Harness) -> None:
    harness.model.respond_with(lambda request: error(500))

    ts = await harness.mention(QUESTION)
    await harness.settle()

    [answer] = harness.texts(ts)
    assert messages.MODEL_DOWN in answer and "<https://docs.example/" in answer
    assert status_cleared(harness)


async def test_without_a_model_answers_are_quoted_passages_labelled_as_such(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    async with running_app(slack, fake_model, redis_url, corpus_index, with_model=False) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        [answer] = harness.texts(ts)
        assert messages.NO_MODEL in answer and "<https://docs.example/" in answer

        harness.retriever.down = True
        ts = await harness.mention(QUESTION)
        await harness.settle()
        assert harness.texts(ts) == [messages.SEARCH_DOWN] and status_cleared(harness)


async def test_when_redis_is_down_the_thread_says_so(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, tmp_path: Path
) -> None:
    dead = f"unix://{tmp_path}/no-redis.sock"
    async with running_app(slack, fake_model, redis_url, corpus_index, redis=dead) as harness:
        ts = await harness.mention(QUESTION)
        await harness.message("And for dental?", thread_ts=ts)
        await harness.settle()
        # Not acknowledged, so Slack delivers them again (the app_mention, and the reply: nothing was dropped)
        assert [status for status, _ in harness.responses] == [500, 200, 500]  # the `message` twin is the mention's
        assert harness.texts(ts) == []

        mention = {
            "type": "app_mention",
            "user": ALICE,
            "text": f"<@{BOT_USER}> {QUESTION}",
            "ts": ts,
            "channel": CHANNEL,
        }
        assert await harness.event(mention, retry=3) == 200  # Slack's last try: the thread is told instead
        await harness.command("What is covered?")
        await harness.settle()
        assert harness.texts(ts) == [messages.STORE_DOWN]
        assert [call["text"] for call in slack.calls_of("response_url")] == [messages.STORE_DOWN]


async def test_when_slack_refuses_the_answer_the_thread_is_told(harness: Harness) -> None:
    harness.model.script(tools(search("balance billing protection")), reply("Protected [S1]."))
    harness.slack.fail("chat.postMessage", "internal_error")

    ts = await harness.mention(QUESTION)
    await harness.settle()

    assert harness.texts(ts) == [messages.SLACK_FAILED] and status_cleared(harness)


async def test_a_rate_limited_post_is_retried_after_retry_after(harness: Harness) -> None:
    harness.model.script(tools(search("balance billing protection")), reply("Protected [S1]."))
    harness.slack.rate_limit("chat.postMessage", retry_after=0)

    ts = await harness.mention(QUESTION)
    await harness.settle()

    assert len(harness.slack.calls_of("chat.postMessage")) == 2
    assert harness.texts(ts)[0].startswith("Protected <https://docs.example/")


async def test_without_thread_status_a_placeholder_shows_progress_and_becomes_the_answer(harness: Harness) -> None:
    harness.model.script(tools(search("balance billing protection")), reply("Protected [S1]."))
    harness.slack.fail("assistant.threads.setStatus", "not_allowed_token_type")

    ts = await harness.mention(QUESTION)
    await harness.settle()

    [placeholder] = harness.slack.calls_of("chat.postMessage")
    assert messages.WORKING in placeholder["text"]
    updates = [call["text"] for call in harness.slack.calls_of("chat.update")]
    assert any("Searching: balance billing protection" in text for text in updates)
    [answer] = harness.texts(ts)
    assert answer.startswith("Protected <https://docs.example/")


async def test_a_turn_that_takes_too_long_is_stopped_and_says_so(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.script(reply("Too late [S1].", latency=2))
    async with running_app(slack, fake_model, redis_url, corpus_index, turn_timeout=0.5) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        assert harness.texts(ts) == [messages.TURN_TIMED_OUT] and status_cleared(harness)


async def test_a_turn_that_takes_too_long_replaces_its_placeholder_with_the_reason(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.script(reply("Too late [S1].", latency=2))
    slack.fail("assistant.threads.setStatus", "not_allowed_token_type")
    async with running_app(slack, fake_model, redis_url, corpus_index, turn_timeout=0.5) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        [placeholder] = slack.calls_of("chat.postMessage")
        assert messages.WORKING in placeholder["text"]
        assert harness.texts(ts) == [messages.TURN_TIMED_OUT]  # the placeholder itself now says why


async def test_a_mention_without_a_question_asks_for_one(harness: Harness) -> None:
    ts = await harness.mention("")
    await harness.settle()

    assert harness.texts(ts) == [messages.EMPTY_QUESTION]


async def test_a_long_answer_is_split_into_sections_within_slacks_limits(harness: Harness) -> None:
    long_text = ("Protected in network [S1]. " + "More detail about the plan. " * 150 + "\n\n") * 4
    harness.model.script(tools(search("balance billing protection")), reply(long_text))

    ts = await harness.mention(QUESTION)
    await harness.settle()

    [message] = harness.slack.thread(CHANNEL, ts)
    sections = [block["text"]["text"] for block in message.blocks if block["type"] == "section"]
    assert len(sections) >= 4 and all(len(text) <= 3000 for text in sections)
    assert len(message.blocks) <= 50  # and the slack fixture validates every block


async def test_requests_with_a_bad_signature_are_refused_and_ignored(harness: Harness) -> None:
    body = json.dumps(
        {
            "type": "event_callback",
            "event_id": "Ev1",
            "team_id": "T0FOLIO01",
            "event": {"type": "app_mention", "user": "U1", "text": "hi", "ts": "1.1", "channel": CHANNEL},
        }
    )
    async with harness.http.post(
        harness.url, data=body, headers={**sign(body, secret="wrong"), "Content-Type": "application/json"}
    ) as response:
        assert response.status == 401
    old = sign(body, timestamp=1_000_000_000)  # a replayed request from 2001
    headers = {**old, "Content-Type": "application/json"}
    async with harness.http.post(harness.url, data=body, headers=headers) as response:
        assert response.status == 401
    await harness.settle()
    assert harness.slack.calls_of("chat.postMessage") == []
