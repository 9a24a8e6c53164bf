"""Delete means delete: every response the model created for a thread is deleted with it, whatever became of the
turn that created it (timed out, failed, or its answer refused by Slack), and the confirmation says what was done."""

from __future__ import annotations

from pathlib import Path

from bot import messages
from bot.slack.render import ACTION_DELETE
from tests.fakes.openai_responses import FakeResponses, error, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL, Harness

QUESTION = "What protection is there against balance billing?"


async def delete_thread(harness: Harness, ts: str) -> None:
    """Click Delete under the first of Folio's messages in the thread, and wait for it to finish."""
    [first, *_] = harness.slack.thread(CHANNEL, ts)
    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=first.ts)
    await harness.settle()


async def test_a_turn_that_timed_out_mid_loop_has_its_responses_deleted(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.script(tools(search("balance billing protection")))
    async with running_app(slack, fake_model, redis_url, corpus_index, turn_timeout=1) as harness:
        harness.retriever.delay = 3  # the model asked for a search; the turn runs out of time while it runs
        ts = await harness.mention(QUESTION)
        await harness.settle()
        assert harness.texts(ts) == [messages.TURN_TIMED_OUT]
        created = fake_model.stored_ids()
        assert created

        await delete_thread(harness, ts)

        assert sorted(fake_model.deleted) == sorted(created) and fake_model.stored_ids() == []
        assert harness.texts(ts) == [] and not await harness.store.exists(harness.thread_key(ts))
        assert harness.ephemeral() == [messages.deleted(messages=1, responses=len(created))]


async def test_a_turn_that_failed_after_a_tool_round_has_its_responses_deleted(harness: Harness) -> None:
    harness.retriever.down = True  # the search fails, then the model fails, then the quoted fallback's search too
    harness.model.script(tools(search("balance billing protection")), error(500))

    ts = await harness.mention(QUESTION)
    await harness.settle()
    assert harness.texts(ts) == [messages.SEARCH_DOWN]
    created = harness.model.stored_ids()
    assert created

    await delete_thread(harness, ts)

    assert sorted(harness.model.deleted) == sorted(created) and harness.model.stored_ids() == []
    assert harness.ephemeral() == [messages.deleted(messages=1, responses=len(created))]


async def test_a_turn_whose_answer_slack_refused_has_its_responses_deleted(harness: Harness) -> None:
    harness.model.script(tools(search("balance billing protection")), reply("Protected [S1]."))
    harness.slack.fail("chat.postMessage", "internal_error")

    ts = await harness.mention(QUESTION)
    await harness.settle()
    assert harness.texts(ts) == [messages.SLACK_FAILED]
    created = harness.model.stored_ids()
    assert len(created) == 2

    await delete_thread(harness, ts)

    assert sorted(harness.model.deleted) == sorted(created) and harness.model.stored_ids() == []
    assert harness.texts(ts) == []
    assert harness.ephemeral() == [
        (
            "Deleted: 1 message of mine in this thread, 2 responses stored by the model service, "
            "and my record of this conversation."
        )
    ]


async def test_responses_of_failed_turns_are_deleted_with_those_of_answered_ones(harness: Harness) -> None:
    harness.model.script(
        tools(search("balance billing protection")),
        reply("Protected [S1]."),
        tools(search("out of network")),
        error(500),
    )
    ts = await harness.mention(QUESTION)
    await harness.settle()
    harness.retriever.down = True
    await harness.message("And out of network?", thread_ts=ts)
    await harness.settle()
    assert harness.texts(ts)[-1] == messages.SEARCH_DOWN
    created = harness.model.stored_ids()
    assert len(created) == 3

    await delete_thread(harness, ts)

    assert sorted(harness.model.deleted) == sorted(created)
    assert harness.ephemeral() == [
        (
            "Deleted: 2 messages of mine in this thread, 3 responses stored by the model service, "
            "and my record of this conversation."
        )
    ]
