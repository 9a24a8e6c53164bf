"""The buttons under an answer: feedback, Think harder, and deletion (who may, and resuming a half-done one)."""

from __future__ import annotations

from pathlib import Path

from bot import messages
from bot.slack.render import ACTION_DELETE, ACTION_HELPFUL, ACTION_NOT_HELPFUL, ACTION_THINK_HARDER
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ADMIN, BOB, CHANNEL, Harness

QUESTION = "What protection is there against balance billing?"


async def answered_thread(harness: Harness) -> tuple[str, str]:
    """A mention answered once; returns (thread ts, answer message ts)."""
    harness.model.script(tools(search("balance billing protection")), reply("You are protected [S1]."))
    ts = await harness.mention(QUESTION)
    await harness.settle()
    answer = harness.slack.thread(CHANNEL, ts)[-1]
    return ts, answer.ts


async def test_feedback_is_stored_with_the_turn_and_acknowledged_to_the_clicker(harness: Harness) -> None:
    ts, answer_ts = await answered_thread(harness)

    assert await harness.click(ACTION_NOT_HELPFUL, thread_ts=ts, message_ts=answer_ts) == 200
    await harness.settle()

    conversation = await harness.store.load(harness.thread_key(ts))
    assert conversation.turns[0].feedback == "not_helpful"
    assert harness.ephemeral() == [messages.FEEDBACK_THANKS]

    await harness.click(ACTION_HELPFUL, thread_ts=ts, message_ts=answer_ts)
    await harness.settle()
    assert (await harness.store.load(harness.thread_key(ts))).turns[0].feedback == "helpful"


async def test_think_harder_asks_the_same_question_again_with_the_thorough_model(harness: Harness) -> None:
    ts, answer_ts = await answered_thread(harness)
    harness.model.script(tools(search("balance billing protection")), reply("In depth: protected [S1]."))

    await harness.click(ACTION_THINK_HARDER, thread_ts=ts, message_ts=answer_ts, user=BOB)
    await harness.settle()

    rerun = harness.model.requests[-2]
    assert rerun.body["model"] == "gpt-5" and "balance billing" in rerun.user_text
    assert "In depth: protected" in harness.texts(ts)[-1]
    conversation = await harness.store.load(harness.thread_key(ts))
    assert [turn.profile for turn in conversation.turns] == ["fast", "thorough"]
    assert conversation.turns[1].asked_by == BOB


async def test_only_the_starter_or_an_admin_may_delete(harness: Harness) -> None:
    ts, answer_ts = await answered_thread(harness)

    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=answer_ts, user=BOB)
    await harness.settle()

    assert "Only <@U0ALICE01>, who started it, or a workspace admin" in harness.ephemeral(BOB)[0]
    assert await harness.store.exists(harness.thread_key(ts)) and harness.texts(ts)

    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=answer_ts, user=ADMIN)
    await harness.settle()
    assert harness.ephemeral(ADMIN) == [
        (
            "Deleted: 1 message of mine in this thread, 2 responses stored by the model service, "
            "and my record of this conversation."
        )
    ]


async def test_delete_removes_messages_stored_responses_and_the_record(harness: Harness) -> None:
    ts, answer_ts = await answered_thread(harness)
    created = harness.model.stored_ids()
    assert created

    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=answer_ts)
    await harness.settle()

    assert harness.texts(ts) == []
    assert sorted(harness.model.deleted) == sorted(created)
    assert not await harness.store.exists(harness.thread_key(ts))
    assert harness.ephemeral() == [messages.deleted(messages=1, responses=len(created))]


async def test_a_half_failed_deletion_keeps_what_is_left_and_resumes(harness: Harness) -> None:
    ts, answer_ts = await answered_thread(harness)
    stuck = harness.model.stored_ids()[-1]
    harness.model.failing_deletes.add(stuck)

    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=answer_ts)
    await harness.settle()

    left = await harness.store.load(harness.thread_key(ts))
    assert left.response_ids == [stuck] and left.message_ts == []
    assert "could not delete everything yet (1 item left)" in harness.ephemeral()[0]

    harness.model.failing_deletes.clear()
    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=answer_ts)
    await harness.settle()

    assert stuck in harness.model.deleted and not await harness.store.exists(harness.thread_key(ts))
    assert harness.ephemeral()[-1] == (
        "Deleted: no messages of mine in this thread, 1 response stored by the model service, "
        "and my record of this conversation."
    )  # what this second click did
    assert [call["ts"] for call in harness.slack.calls_of("chat.delete")] == [answer_ts]  # not deleted twice


async def test_buttons_on_a_deleted_conversation_say_so(harness: Harness) -> None:
    ts, answer_ts = await answered_thread(harness)
    await harness.store.delete(harness.thread_key(ts))

    await harness.click(ACTION_HELPFUL, thread_ts=ts, message_ts=answer_ts)
    await harness.click(ACTION_THINK_HARDER, thread_ts=ts, message_ts=answer_ts)
    await harness.settle()

    assert harness.ephemeral() == [messages.CONVERSATION_GONE, messages.CONVERSATION_GONE]


async def test_delete_also_removes_failure_messages_of_later_turns(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.script(
        tools(search("balance billing protection")),
        reply("You are protected [S1]."),
        reply("Too late [S1].", latency=2),
    )
    async with running_app(slack, fake_model, redis_url, corpus_index, turn_timeout=1) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        await harness.message("And out of network?", thread_ts=ts)
        await harness.settle()
        assert harness.texts(ts)[-1] == messages.TURN_TIMED_OUT

        await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=harness.slack.thread(CHANNEL, ts)[0].ts)
        await harness.settle()

        # the second turn was cut off while the model was still answering: its response never reached Folio
        assert harness.texts(ts) == [] and harness.ephemeral() == [
            (
                "Deleted: 2 messages of mine in this thread, 2 responses stored by the model service, "
                "and my record of this conversation."
            )
        ]
