"""Streams that read as they are written: whole words from the first append, the text growing while the model writes,
the end right after the model's last token, and one budget of chat.appendStream calls per workspace that many
streams share (Slack's tier 4) instead of meeting 429. The fake Slack counts every append and when it came."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import TEAM, FakeSlack, Message
from tests.fakes.slack_stream import View
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL, Harness

QUESTION = "What protection is there against balance billing?"
SENTENCE = "Emergency care is covered in and out of network, and you pay in-network cost sharing [S1]. "
PER_TOKEN = 1 / 60  # a model writing 60 tokens a second
TIER = 30  # appendStream calls a minute: Slack's tier is 100+, a lower one keeps the test short (the rule is the same)


@pytest.fixture
async def streaming(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> AsyncIterator[Harness]:
    async with running_app(slack, fake_model, redis_url, corpus_index, streaming=True) as running:
        yield running


def streamed(harness: Harness, thread_ts: str) -> tuple[Message, list[View]]:
    [message] = [m for m in harness.slack.thread(CHANNEL, thread_ts) if m.ts != thread_ts]
    return message, harness.slack.views_of(CHANNEL, message.ts)


def text_views(views: list[View]) -> list[View]:
    """The states a reader saw while the answer streamed, each with more text than the one before."""
    seen, grown = "", []
    for view in views:
        if view.streaming and view.markdown != seen:
            seen = view.markdown
            grown.append(view)
    return grown


async def test_the_answer_shows_whole_words_from_the_first_append_grows_while_written_and_ends_with_the_model(
    streaming: Harness,
) -> None:
    answer = SENTENCE * 8  # ~730 characters, ~4 s at 60 tokens a second
    streaming.model.script(tools(search("balance billing protection")), reply(answer, token_delay=PER_TOKEN))

    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    message, views = streamed(streaming, ts)
    response = streaming.model.stored_ids()[-1]
    first_token, last_token = streaming.model.first_tokens[response], streaming.model.last_tokens[response]
    grown = text_views(views)
    assert message.markdown.startswith(grown[-1].markdown) and message.markdown.count("Emergency care") == 8
    for view in grown:  # never half a word: each state ends after a space or a whole citation
        assert view.markdown[-1].isspace() or view.markdown.endswith(")"), view.markdown[-20:]
    assert grown[0].at - first_token < 0.3  # the first words as soon as they are whole
    writing = [view.at for view in grown if view.at <= last_token]
    gaps = [later - earlier for earlier, later in zip([first_token, *writing], [*writing, last_token])]
    assert max(gaps) < 1.5  # the text keeps up (about every half second; 2 s and more with 250-character batches)
    [end] = [view for view in views if view.blocks and not view.streaming][:1]
    assert end.at - last_token < 0.15  # the end follows the model's last token (the read pause once held it 200 ms)


async def test_streams_at_once_share_the_workspaces_appends_and_none_meets_429(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    slack.tier("chat.appendStream", per_window=TIER, window=60.0)  # Slack's rule: past the tier, HTTP 429
    fake_model.respond_with(  # a search, then the answer
        lambda request: (
            reply(SENTENCE * 3, token_delay=0.01)
            if request.tool_outputs
            else tools(search("balance billing protection"))
        )
    )
    async with running_app(
        slack, fake_model, redis_url, corpus_index, streaming=True, folio_stream_appends_per_minute=TIER
    ) as app:
        started = time.monotonic()
        asked = await asyncio.gather(*(app.mention(f"Question {n}?") for n in range(10)))
        await app.settle()
        took = time.monotonic() - started

    appends = [call for call in slack.calls if call.method == "chat.appendStream"]
    assert slack.limited == []  # no 429: the streams widened their batches instead
    assert len(appends) <= TIER // 5 + (TIER - TIER // 5) * took / 60 + 1  # the burst, then the pace
    assert len(slack.calls_of("chat.stopStream")) == 10
    for ts in asked:  # every answer complete, in its streamed message
        message, _ = streamed(app, ts)
        assert message.markdown.count("Emergency care") == 3 and message.blocks


async def test_a_stream_without_budget_sends_nothing_more_ends_whole_and_the_next_turn_is_posted(
    streaming: Harness,
) -> None:
    assert streaming.folio is not None
    await streaming.folio.stream_pace.drain(TEAM, seconds=60)  # another process spent the workspace's minute
    streaming.model.script(tools(search("balance billing protection")), reply(SENTENCE * 2, token_delay=0.005))

    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    message, _ = streamed(streaming, ts)
    assert slack_calls(streaming, "chat.appendStream") == 0 and message.markdown.count("Emergency care") == 2
    streaming.model.script(reply("Still covered [S1]."))
    await streaming.message("And out of network?", thread_ts=ts)
    await streaming.settle()
    assert slack_calls(streaming, "chat.startStream") == 1  # the posted path while the budget is spent
    assert "Still covered <https://docs.example/" in streaming.texts(ts)[-1]


async def test_a_429_on_an_append_is_not_waited_out_and_the_stop_carries_the_rest(streaming: Harness) -> None:
    streaming.slack.rate_limit("chat.appendStream", retry_after=30)
    streaming.model.script(tools(search("balance billing protection")), reply(SENTENCE * 2, token_delay=0.005))

    started = time.monotonic()
    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    message, _ = streamed(streaming, ts)
    assert time.monotonic() - started < 10  # not 30 s of Retry-After (slack_sdk would sleep it, up to 3 times)
    assert slack_calls(streaming, "chat.appendStream") == 1  # refused once, then nothing more through it
    assert message.markdown.count("Emergency care") == 2 and message.blocks  # the stop carried the answer
    assert streaming.folio is not None and await streaming.folio.stream_pace.take(TEAM) > 20  # shared with all


def slack_calls(harness: Harness, method: str) -> int:
    return len(harness.slack.calls_of(method))
