"""The policy of today governs every turn (issue 9, item 5): a thread's scope is the current channel policy narrowed
by the thread's own `/ask` filters, a thread whose scope changed says so once, and the buttons under an answer work
the same in a direct message as in a channel."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
import yaml
from redis.asyncio import Redis

from bot import messages
from bot.ingest.lifecycle import remove_files
from bot.models import Conversation, Scope, Tag
from bot.slack.render import ACTION_DELETE, ACTION_HELPFUL, ACTION_THINK_HARDER
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL, DM, POLICY, Harness

QUESTION = "What protection is there against balance billing?"
HR = Tag(key="department", value="hr")
YEAR = Tag(key="year", value="2025")
NOT_FOR_HR = "[NOT_IN_DOCUMENTS] Those documents do not say."  # the corpus is untagged: no tag filter matches


def with_channel(rule: dict) -> dict:
    """POLICY with CHANNEL's rule replaced, as an admin would edit channels.yaml before a restart."""
    return {**POLICY, "channels": {**POLICY["channels"], CHANNEL: rule}}


def changed_notice(harness: Harness, ts: str) -> list[bool]:
    """For each of Folio's messages in the thread: whether it says that what the thread searches changed."""
    return ["has changed since this thread began" in text for text in harness.texts(ts)]


async def answered_under_the_old_policy(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, prefix: str
) -> str:
    """A mention in CHANNEL answered under POLICY (container benefits, no tags); returns the thread's ts."""
    fake_model.script(tools(search("balance billing protection")), reply("Protected [S1]."))
    async with running_app(slack, fake_model, redis_url, corpus_index, prefix=prefix) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        assert harness.retriever.scopes[-1] == Scope(container="benefits")
        assert "docs.example" in harness.texts(ts)[0]
    return ts


async def test_default_tags_added_to_a_channel_reach_its_existing_threads_and_are_told_once(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    prefix = f"slack-{uuid.uuid4().hex[:8]}"
    ts = await answered_under_the_old_policy(slack, fake_model, redis_url, corpus_index, prefix)

    fake_model.script(tools(search("out of network")), reply(NOT_FOR_HR), tools(search("labs")), reply(NOT_FOR_HR))
    policy = with_channel({"container": "benefits", "tags": ["department:hr"]})
    async with running_app(slack, fake_model, redis_url, corpus_index, prefix=prefix, policy=policy) as harness:
        await harness.message("And out of network?", thread_ts=ts)
        await harness.settle()
        assert harness.retriever.scopes[-1] == Scope(container="benefits", tags=(HR,))
        await harness.message("And labs?", thread_ts=ts)
        await harness.settle()
        assert harness.retriever.scopes[-1] == Scope(container="benefits", tags=(HR,))

        assert changed_notice(harness, ts) == [False, True, False]  # said once, on the first answer under it
        assert "`department:hr`" in harness.texts(ts)[1]


async def test_an_ask_threads_own_filters_narrow_todays_policy_and_are_stored_as_filters(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    prefix = f"slack-{uuid.uuid4().hex[:8]}"
    fake_model.script(tools(search("balance billing protection")), reply(NOT_FOR_HR))
    async with running_app(slack, fake_model, redis_url, corpus_index, prefix=prefix) as harness:
        await harness.command("year:2025 What about balance billing?")
        await harness.settle()
        root = next(m.ts for m in slack.messages.values() if m.thread_ts is None)
        stored = await harness.store.load(harness.thread_key(root))
        assert stored.narrowing == (YEAR,)

    fake_model.script(tools(search("labs")), reply(NOT_FOR_HR))
    policy = with_channel({"container": "benefits", "tags": ["department:hr"]})
    async with running_app(slack, fake_model, redis_url, corpus_index, prefix=prefix, policy=policy) as harness:
        await harness.message("And labs?", thread_ts=root)
        await harness.settle()
        assert harness.retriever.scopes[-1] == Scope(container="benefits", tags=(HR, YEAR))


async def test_a_thread_moved_to_other_documents_searches_them_and_cites_nothing_it_may_no_longer_see(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    prefix = f"slack-{uuid.uuid4().hex[:8]}"
    ts = await answered_under_the_old_policy(slack, fake_model, redis_url, corpus_index, prefix)

    fake_model.script(
        tools(search("balance billing protection")),
        reply("Still protected [S1]."),  # a benefits passage
        reply("[NOT_IN_DOCUMENTS] The legal documents do not say."),
    )  # after the correction round
    policy = with_channel({"container": "legal"})
    async with running_app(slack, fake_model, redis_url, corpus_index, prefix=prefix, policy=policy) as harness:
        await harness.message("Is that still so?", thread_ts=ts)
        await harness.settle()

        assert harness.retriever.scopes[-1] == Scope(container="legal")
        answer = harness.texts(ts)[-1]
        assert changed_notice(harness, ts)[-1] and "*legal*" in answer
        assert "docs.example" not in answer  # the old benefits passage is no longer citable here
        [restarted] = [request for request in fake_model.requests if request.user_text == "Is that still so?"]
        assert "previous_response_id" not in restarted.body  # the model's context no longer holds those passages
        # Issue 18, item 1: the earlier answer relied on a document this thread may no longer see: rebuilt without it
        assert "Protected" not in str(restarted.body["input"]) and "References" not in str(restarted.body["input"])
        assert messages.EARLIER_ANSWERS_FORGOTTEN in answer
        conversation = await harness.store.load(harness.thread_key(ts))
        assert all(chunk.container == "legal" for chunk in conversation.sources.values())


async def test_a_document_removed_after_a_thread_cited_it_is_not_cited_there_again(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index.sqlite"
    shutil.copy(corpus_index, index)  # the session's index is shared: remove from a copy
    fake_model.script(
        tools(search("balance billing protection")),
        reply("Protected [S1]."),
        reply("Still protected [S1]."),  # the removed passage, from the model's context
        reply("[NOT_IN_DOCUMENTS] The documents no longer say."),
    )  # after the correction round
    async with running_app(slack, fake_model, redis_url, index) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        cited = (await harness.store.load(harness.thread_key(ts))).sources["S1"]
        local = harness.retriever.inner
        held = [held for held in await local.files(cited.container) if held.file == cited.file]
        await remove_files(local, None, held)  # `folio remove FILE --container benefits`

        await harness.message("Is that still so?", thread_ts=ts)
        await harness.settle()

        assert "docs.example" not in harness.texts(ts)[-1]  # the removed document is not cited again
        [asked] = [request for request in fake_model.requests if request.user_text == "Is that still so?"]
        assert "previous_response_id" not in asked.body  # the model's context no longer holds its passages
        conversation = await harness.store.load(harness.thread_key(ts))
        assert all(chunk.file != cited.file for chunk in conversation.sources.values())
        # Issue 18, item 1: nor its name, the claim it backed or its label, in what the model is sent or what is kept
        sent = str(asked.body["input"])
        assert cited.file not in sent and "Protected" not in sent and "References" not in sent
        redis = Redis.from_url(redis_url)
        stored = await redis.get(harness.store._key(harness.thread_key(ts)))
        await redis.aclose()
        assert cited.file.encode() not in stored and b"Protected [1]" not in stored
        assert harness.texts(ts)[-1].count(messages.EARLIER_ANSWERS_FORGOTTEN) == 1  # said once, in this answer

        fake_model.script(reply("[NOT_IN_DOCUMENTS] Still nothing."))
        await harness.message("And now?", thread_ts=ts)
        await harness.settle()
        assert messages.EARLIER_ANSWERS_FORGOTTEN not in harness.texts(ts)[-1]  # and not again


async def test_a_thread_stored_before_narrowing_was_kept_apart_still_loads_and_keeps_its_filters(
    harness: Harness, redis_url: str
) -> None:
    legacy = Conversation(scope=Scope(container="benefits", tags=(YEAR,)), started_by="U0ALICE01")
    record = legacy.model_dump_json(exclude={"narrowing"})  # as saved before threads kept their filters apart
    assert "narrowing" not in record
    redis = Redis.from_url(redis_url)
    thread = harness.thread_key("1700000000.999999")
    await redis.set(harness.store._key(thread), record)
    await redis.aclose()
    harness.model.script(tools(search("labs")), reply(NOT_FOR_HR))

    await harness.message("And labs?", thread_ts=thread.thread_ts)
    await harness.settle()

    assert harness.retriever.scopes[-1] == Scope(container="benefits", tags=(YEAR,))
    assert (await harness.store.load(thread)).narrowing == (YEAR,)


async def dm_answered(harness: Harness) -> tuple[str, str]:
    harness.model.script(tools(search("balance billing protection")), reply("Protected [S1]."))
    ts = await harness.message(QUESTION, channel=DM, channel_type="im")
    await harness.settle()
    return ts, harness.slack.thread(DM, ts)[-1].ts


async def test_think_harder_in_a_direct_message_answers_there(harness: Harness) -> None:
    ts, answer_ts = await dm_answered(harness)
    harness.model.script(tools(search("balance billing protection")), reply("In depth: protected [S1]."))

    await harness.click(ACTION_THINK_HARDER, thread_ts=ts, message_ts=answer_ts, channel=DM)
    await harness.settle()

    assert "In depth: protected" in harness.texts(ts, channel=DM)[-1]
    assert harness.model.requests[-1].body["model"] == "gpt-5"


async def test_feedback_and_delete_in_a_direct_message_work_as_in_a_channel(harness: Harness) -> None:
    ts, answer_ts = await dm_answered(harness)

    await harness.click(ACTION_HELPFUL, thread_ts=ts, message_ts=answer_ts, channel=DM)
    await harness.settle()
    assert (await harness.store.load(harness.thread_key(ts, channel=DM))).turns[0].feedback == "helpful"

    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=answer_ts, channel=DM)
    await harness.settle()
    assert harness.texts(ts, channel=DM) == [] and harness.model.stored_ids() == []
    assert harness.ephemeral() == [
        messages.FEEDBACK_THANKS,
        (
            "Deleted: 1 message of mine in this thread, 2 responses stored by the model service, "
            "and my record of this conversation."
        ),
    ]


async def test_an_edit_of_channels_yaml_reaches_the_next_turn_without_a_restart_and_a_broken_edit_changes_nothing(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    policy_file = tmp_path / "channels.yaml"
    policy_file.write_text(yaml.safe_dump(POLICY))
    fake_model.script(
        tools(search("balance billing protection")),
        reply("Protected [S1]."),
        tools(search("out of network")),
        reply(NOT_FOR_HR),
        tools(search("labs")),
        reply(NOT_FOR_HR),
    )
    async with running_app(slack, fake_model, redis_url, corpus_index, policy_file=policy_file) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        assert harness.retriever.scopes[-1] == Scope(container="benefits")

        policy_file.write_text(yaml.safe_dump(with_channel({"container": "benefits", "tags": ["department:hr"]})))
        await harness.message("And out of network?", thread_ts=ts)
        await harness.settle()
        assert harness.retriever.scopes[-1] == Scope(container="benefits", tags=(HR,))
        assert changed_notice(harness, ts) == [False, True]

        policy_file.write_text("channels:\n  C0BENEFIT1: [oops\n")  # saved half-way through an edit
        await harness.message("And labs?", thread_ts=ts)
        await harness.settle()
        assert harness.retriever.scopes[-1] == Scope(container="benefits", tags=(HR,))  # the last good policy
        assert changed_notice(harness, ts) == [False, True, False]
    [said] = [record.getMessage() for record in caplog.records if "stays in force" in record.getMessage()]
    assert str(policy_file) in said
