"""Streamed turns, read back the way a person sees them: task cards in order, the answer growing, the final message.

Every test drives the real Bolt app with FOLIO_STREAMING on; the fake Slack records each state of each message.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot import messages
from bot.slack.render import ACTION_DELETE
from bot.slack.stream_outbox import BATCH as TEXT_BATCH
from tests.fakes.openai_responses import FakeResponses, broken, reply, rewrite, search, tools
from tests.fakes.slack_api import TEAM, FakeSlack, Message
from tests.fakes.slack_stream import View
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, DM, Harness

QUESTION = "What protection is there against balance billing?"
LONG = (
    "You are protected from balance billing for emergency care and for most care at in-network facilities [S1]. "
    "Out-of-network providers at an in-network hospital may not bill you more than your in-network cost sharing, "
    "and the plan counts what you pay toward your deductible and your out-of-pocket maximum [S2]. "
    "If you get a surprise bill, contact member services and the plan will work with the provider to settle it; "
    "you only pay the amount you would have paid in network [S1][S2]. Ground ambulances are not covered by this "
    "rule everywhere, so check your state's rules before you pay such a bill [S3]."
)


@pytest.fixture
async def streaming(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> AsyncIterator[Harness]:
    async with running_app(slack, fake_model, redis_url, corpus_index, streaming=True) as running:
        yield running


def streamed(harness: Harness, thread_ts: str, channel: str = CHANNEL) -> tuple[Message, list[View]]:
    """The one message Folio streamed in the thread, and every state it was seen in."""
    [message] = [m for m in harness.slack.thread(channel, thread_ts) if m.ts != thread_ts]
    return message, harness.slack.views_of(channel, message.ts)


async def ask(harness: Harness, text: str = "You are protected [S1].") -> str:
    """A mention answered after one search; returns the thread ts."""
    harness.model.script(tools(search("balance billing protection")), reply(text))
    ts = await harness.mention(QUESTION)
    await harness.settle()
    return ts


def card_titles(view: View) -> list[tuple[str, str]]:
    return [(task["title"], task["status"]) for task in view.tasks]


async def test_a_mention_streams_its_steps_then_its_answer_and_ends_with_sources_and_buttons(
    streaming: Harness,
) -> None:
    streaming.model.script(
        tools(rewrite("balance billing protection")),
        tools(search("balance billing protection"), search("surprise bills out of network")),
        reply(LONG, token_delay=0.005),
    )

    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    message, views = streamed(streaming, ts)
    [start] = streaming.slack.calls_of("chat.startStream")
    assert (start["thread_ts"], start["recipient_user_id"], start["recipient_team_id"]) == (ts, ALICE, TEAM)
    assert card_titles(views[0]) == [(messages.WORKING, "in_progress")]  # something shows at once
    final = views[-1]
    assert [title for title, _ in card_titles(final)] == [
        messages.WORKING,
        messages.PROGRESS_REWRITE,
        "Searching: balance billing protection",
        "Searching: surprise bills out of network",
    ]
    assert {status for _, status in card_titles(final)} == {"complete"} and not final.streaming
    rewrite_card, search_card = final.tasks[1], final.tasks[2]
    assert rewrite_card["details"] == "balance billing protection"
    assert search_card["sources"] and all(s["url"].startswith("https://docs.example/") for s in search_card["sources"])
    assert all(", page " in s["text"] for s in search_card["sources"])
    growing = [view.markdown for view in views if view.markdown]
    assert len(set(growing)) >= 3 and all(b.startswith(a) for a, b in zip(growing, growing[1:]))  # in pieces
    assert message.markdown.startswith("You are protected from balance billing")
    assert "[[1]](https://docs.example/" in message.markdown
    footer = json.dumps(message.blocks)
    assert "Sources" in footer and "Applied filters" in footer and "folio_delete" in footer
    conversation = await streaming.store.load(streaming.thread_key(ts))
    assert conversation.turns[0].answer.startswith("You are protected") and message.ts in conversation.message_ts


async def test_an_unknown_or_half_written_marker_is_never_visible_and_the_corrected_answer_replaces_the_stream(
    streaming: Harness,
) -> None:
    tokens = ["Protected", " for", " emergencies", " [S", "9", "]", " and", " in", " network", " [S", "1", "]."]
    streaming.model.script(
        tools(search("balance billing protection")),
        reply("".join(tokens), tokens=tokens, token_delay=0.01),
        reply("You are protected in emergencies and in network [S1]."),  # the correction round
    )

    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    message, views = streamed(streaming, ts)
    assert all("S9" not in view.markdown and "[S" not in view.markdown for view in views)
    assert any("Protected for emergencies" in view.markdown for view in views)  # it did stream
    [text] = streaming.texts(ts)
    assert text.startswith(messages.STREAM_REPLACED)
    assert "You are protected in emergencies and in network <https://docs.example/" in text
    assert "S9" not in text and "Protected for" not in text


async def test_a_direct_message_streams_with_its_recipient(streaming: Harness) -> None:
    streaming.model.script(tools(search("balance billing protection")), reply("You are protected [S1]."))

    ts = await streaming.message(QUESTION, channel=DM, channel_type="im")
    await streaming.settle()

    message, views = streamed(streaming, ts, channel=DM)
    [start] = streaming.slack.calls_of("chat.startStream")
    assert (start["channel"], start["recipient_user_id"]) == (DM, ALICE)
    assert message.markdown.startswith("You are protected [[1]](https://docs.example/") and message.blocks


async def test_ask_restates_the_question_and_streams_the_answer_in_its_thread(streaming: Harness) -> None:
    streaming.model.script(tools(search("balance billing protection")), reply("You are protected [S1]."))

    status, _ = await streaming.command("--thorough What protection is there?")
    await streaming.settle()

    assert status == 200
    [root] = streaming.slack.calls_of("chat.postMessage")
    root_message = next(m for m in streaming.slack.messages.values() if m.text == root["text"])
    message, views = streamed(streaming, root_message.ts)
    assert "You are protected [[1]](https://docs.example/" in message.markdown
    assert card_titles(views[0]) == [(messages.THINKING_HARDER, "in_progress")]
    assert "Searched *benefits*" in json.dumps(message.blocks)  # the applied filters end the stream


async def test_the_first_text_goes_out_at_once_and_the_rest_in_batches_of_250_characters(streaming: Harness) -> None:
    streaming.model.script(tools(search("balance billing protection")), reply(LONG, token_delay=0.001))

    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    message, _ = streamed(streaming, ts)
    appends = streaming.slack.calls_of("chat.appendStream")
    text_only = [a for a in appends if all(chunk["type"] == "markdown_text" for chunk in a["chunks"])]
    assert len(text_only) <= max(1, len(message.markdown) // TEXT_BATCH)  # at most one per 250 characters
    steps = 2  # the search, and writing the answer
    assert len(appends) <= steps + len(text_only)


async def test_a_failing_start_gives_todays_status_line_and_answer_and_is_remembered(streaming: Harness) -> None:
    streaming.slack.fail("chat.startStream", "not_allowed_token_type")

    ts = await ask(streaming)

    [answer] = streaming.texts(ts)
    assert answer.startswith("You are protected <https://docs.example/")
    statuses = [call["status"] for call in streaming.slack.calls_of("assistant.threads.setStatus")]
    assert "Searching: balance billing protection" in statuses and not any(streaming.slack.statuses.values())
    streaming.model.script(reply("Still protected [S1]."))
    await streaming.message("And out of network?", thread_ts=ts)
    await streaming.settle()
    assert len(streaming.slack.calls_of("chat.startStream")) == 1  # the workspace is remembered
    assert "Still protected <https://docs.example/" in streaming.texts(ts)[-1]


async def test_a_failing_append_ends_in_the_answer_shown_by_an_update(streaming: Harness) -> None:
    streaming.slack.fail("chat.appendStream", "internal_error")

    ts = await ask(streaming)

    [text] = streaming.texts(ts)
    assert text.startswith("You are protected <https://docs.example/") and "*Sources*" in text


@pytest.mark.parametrize("error", ["message_not_in_streaming_state", "stopped_by_user", "message_not_found"])
async def test_a_stream_ended_by_slack_or_its_reader_is_not_held_against_the_workspace(
    streaming: Harness, error: str
) -> None:
    # Slack ends a stream after an undocumented timeout, a reader can press Stop, an admin can delete the message:
    # each is about this one message, so the answer is shown by an update and the next turn streams again.
    streaming.slack.fail("chat.appendStream", error)

    ts = await ask(streaming)

    assert streaming.texts(ts)[0].startswith("You are protected <https://docs.example/")
    streaming.model.script(reply("Still protected [S1]."))
    await streaming.message("And out of network?", thread_ts=ts)
    await streaming.settle()
    assert len(streaming.slack.calls_of("chat.startStream")) == 2
    assert streaming.slack.thread(CHANNEL, ts)[-1].markdown.startswith("Still protected [[1]](https://docs.example/")


async def test_an_answer_longer_than_a_stream_holds_is_shown_whole_and_the_workspace_keeps_streaming(
    streaming: Harness,
) -> None:
    sentence = "Emergency care is covered in and out of network, and you pay in-network cost sharing [S1]. "
    long = sentence * (13_000 // len(sentence)) + "The end of the answer [S2]."
    streaming.model.script(tools(search("balance billing protection")), reply(long))

    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    [text] = streaming.texts(ts)
    assert "The end of the answer <https://docs.example/" in text and text.count("Emergency care is covered") == (
        long.count("Emergency care is covered")
    )
    streaming.model.script(reply("Still protected [S1]."))
    await streaming.message("And out of network?", thread_ts=ts)
    await streaming.settle()
    assert len(streaming.slack.calls_of("chat.startStream")) == 2


async def test_an_answer_whose_model_stream_breaks_is_replaced_by_quoted_passages_that_say_why(
    streaming: Harness,
) -> None:
    streaming.model.script(tools(search("balance billing protection")), broken(LONG, after=40, token_delay=0.02))

    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    message, views = streamed(streaming, ts)
    assert any(view.markdown.startswith("You are protected") for view in views)  # it was streaming when it broke
    [text] = streaming.texts(ts)
    assert messages.MODEL_DOWN in text and "You are protected from balance billing" not in text
    assert messages.STREAM_REPLACED not in text  # the citations were not what changed it: no such claim


async def test_with_streaming_off_no_stream_is_opened(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    async with running_app(slack, fake_model, redis_url, corpus_index, streaming=False) as harness:
        harness.model.script(tools(search("balance billing protection")), reply("You are protected [S1]."))
        ts = await harness.mention(QUESTION)
        await harness.settle()

        assert [call.method for call in slack.calls if "Stream" in call.method] == []
        assert all("stream" not in request.body for request in fake_model.requests)
        assert harness.texts(ts)[0].startswith("You are protected <https://docs.example/")


async def test_deleting_the_conversation_removes_the_streamed_answer(streaming: Harness) -> None:
    ts = await ask(streaming)
    message, _ = streamed(streaming, ts)

    await streaming.click(ACTION_DELETE, thread_ts=ts, message_ts=message.ts)
    await streaming.settle()

    assert streaming.slack.thread(CHANNEL, ts) == [] and streaming.slack.views_of(CHANNEL, message.ts)[-1].deleted


async def test_the_first_answer_text_is_on_screen_soon_after_the_models_first_token(streaming: Harness) -> None:
    slow = reply("You are protected against surprise bills for emergency care [S1].", token_delay=0.1)
    streaming.model.script(tools(search("balance billing protection")), slow)

    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    _, views = streamed(streaming, ts)
    first_token = streaming.model.first_tokens[streaming.model.stored_ids()[-1]]
    first_text = next(view.at for view in views if view.markdown)
    assert first_text - first_token < 0.3 and views[-1].at - first_text > 1.0  # on screen long before it ends


async def test_a_turn_that_fails_while_streaming_ends_the_stream_with_the_failure(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    async with running_app(slack, fake_model, redis_url, corpus_index, streaming=True, turn_timeout=1.0) as harness:
        harness.model.script(tools(search("balance billing protection")), reply("You are " * 40, token_delay=0.05))
        ts = await harness.mention(QUESTION)
        await harness.settle()

        message, views = streamed(harness, ts)
        assert any(view.markdown.startswith("You are") for view in views)  # it was streaming when time ran out
        assert harness.texts(ts) == [messages.TURN_TIMED_OUT] and message.stream is None  # replaced by the failure
        assert [call["ts"] for call in slack.calls_of("chat.stopStream")] == [message.ts]


async def test_a_reply_in_a_streamed_thread_streams_its_own_answer_and_chains(streaming: Harness) -> None:
    ts = await ask(streaming)
    first = await streaming.store.load(streaming.thread_key(ts))
    streaming.model.script(reply("Only in network [S1]."))

    await streaming.message("Does that hold out of network?", thread_ts=ts)
    await streaming.settle()

    messages_in_thread = [m for m in streaming.slack.thread(CHANNEL, ts) if m.ts != ts]
    assert [m.markdown.split(" [[")[0] for m in messages_in_thread] == ["You are protected", "Only in network"]
    assert streaming.model.requests[-1].body["previous_response_id"] == first.last_response_id
    conversation = await streaming.store.load(streaming.thread_key(ts))
    assert conversation.message_ts == [m.ts for m in messages_in_thread]


async def test_a_streamed_answer_with_a_link_ends_as_streamed_without_a_rewrite_notice(streaming: Harness) -> None:
    # Issue 18, item 10: the final render and the streaming check disagreed on links and sandbox paths.
    text = "See [the rules](https://example.org/rules) and sandbox:/mnt/data/out/totals.csv for more [S1]."
    tokens = [text[i : i + 3] for i in range(0, len(text), 3)]
    streaming.model.script(tools(search("balance billing protection")), reply(text, tokens=tokens))

    ts = await streaming.mention(QUESTION)
    await streaming.settle()

    message, views = streamed(streaming, ts)
    assert all("](https://example.org" not in view.markdown and "/mnt/data" not in view.markdown for view in views)
    assert message.markdown.startswith("See the rules (https://example.org/rules) and totals.csv for more [[1]](")
    assert not streaming.texts(ts) or messages.STREAM_REPLACED not in streaming.texts(ts)[0]
