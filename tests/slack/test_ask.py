"""`/ask`: public restatement, filters from the policy's tag keys only, help, DMs and unconnected channels."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import PrivateAttr

from bot.config import ChannelPolicy
from bot.models import Scope, Tag
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, DM, LOCKED, POLICY, Harness


def ask_root(harness: Harness) -> str:
    """The ts of the question Folio restated publicly (the first top-level message it posted)."""
    return next(message.ts for message in harness.slack.messages.values() if message.thread_ts is None)


async def test_ask_restates_the_question_with_its_filters_and_answers_in_that_thread(harness: Harness) -> None:
    harness.model.script(tools(search("balance billing")), reply("Nothing matched, so no claim."))

    status, body = await harness.command("year:2025 department:hr --thorough What about balance billing?")
    await harness.settle()

    assert status == 200 and body == ""  # acknowledged silently; the question is posted publicly instead
    root = ask_root(harness)
    restated, answer = harness.texts(root)
    assert f"<@{ALICE}> asked: What about balance billing?" in restated
    assert "`year:2025`, `department:hr`" in restated and "thorough" in restated
    assert harness.retriever.scopes[-1].tags == (Tag(key="year", value="2025"), Tag(key="department", value="hr"))
    assert harness.retriever.scopes[-1].containers == ("benefits",)
    assert harness.model.requests[0].body["model"] == "gpt-5"  # --thorough
    conversation = await harness.store.load(harness.thread_key(root))
    assert conversation.scope.tags == harness.retriever.scopes[-1].tags and root in conversation.message_ts


async def test_a_follow_up_in_an_ask_thread_keeps_its_filters(harness: Harness) -> None:
    harness.model.script(tools(search("balance billing")), reply("First."), tools(search("labs")), reply("Second."))
    await harness.command("year:2025 What about balance billing?")
    await harness.settle()
    root = ask_root(harness)

    await harness.message("And labs?", thread_ts=root)
    await harness.settle()

    assert harness.retriever.scopes[-1].tags == (Tag(key="year", value="2025"),)
    assert "Second." in harness.texts(root)[-1]


async def test_filter_injection_never_widens_the_search(harness: Harness) -> None:
    harness.model.script(tools(search("balance billing")), reply("Protected [S1]."))

    status, body = await harness.command("department:hr')or(1 eq 1 What are the terms?")
    assert status == 200 and "not a filter I can use" in body  # refused to the asker only, nothing posted
    status, body = await harness.command("container:legal What are the terms?")
    await harness.settle()

    assert harness.retriever.scopes and all(scope.containers == ("benefits",) for scope in harness.retriever.scopes)
    assert all(scope.tags == () for scope in harness.retriever.scopes)
    assert "container:legal What are the terms?" in harness.texts(ask_root(harness))[0]


def told(harness: Harness) -> list[str]:
    """What Folio said to the asker alone, through the command's response_url (ephemeral), oldest first."""
    calls = harness.slack.calls_of("response_url")
    assert all(call["response_type"] == "ephemeral" for call in calls)
    return [call["text"] for call in calls]


async def test_a_channel_default_tag_cannot_be_swapped_for_another(harness: Harness) -> None:
    status, _ = await harness.command("department:finance Budget?", channel="C0HRONLY01")
    await harness.settle()  # the turn's first step refuses it, to the asker alone

    [refusal] = told(harness)
    assert "only searches department:hr" in refusal and harness.slack.calls_of("chat.postMessage") == []


async def test_help_and_an_empty_ask_explain_the_syntax_and_this_channels_filters(harness: Harness) -> None:
    for text in ("help", ""):  # answered after the ack (whether the person is of another organisation may ask Slack)
        status, _ = await harness.command(text)
        await harness.settle()
        body = harness.slack.calls_of("response_url")[-1]["text"]
        assert status == 200 and "/ask [key:value ...] [--thorough] your question" in body
        assert "`department`, `year`" in body and "*benefits*" in body
    await harness.command("help", channel=LOCKED)
    await harness.settle()
    assert "not connected" in harness.slack.calls_of("response_url")[-1]["text"]


async def test_an_unconnected_channel_says_how_an_admin_connects_it(harness: Harness) -> None:
    await harness.command("What is covered?", channel=LOCKED)
    await harness.settle()
    [refusal] = told(harness)
    assert "not connected to any documents" in refusal and LOCKED in refusal
    assert harness.slack.calls_of("chat.postMessage") == []

    ts = await harness.mention("What is covered?", channel=LOCKED)
    await harness.settle()

    [reply_text] = harness.texts(ts, channel=LOCKED)
    assert "not connected to any documents" in reply_text and "channels:" in reply_text
    assert harness.model.requests == []


async def test_a_direct_message_is_answered_in_its_dm_thread(harness: Harness) -> None:
    harness.model.script(tools(search("balance billing")), reply("Covered [S1]."))

    ts = await harness.message("What about balance billing?", channel=DM, channel_type="im")
    await harness.settle()

    [answer] = harness.texts(ts, channel=DM)
    assert answer.startswith("Covered <https://docs.example/")
    assert harness.slack.thread(DM, ts)[0].thread_ts == ts


async def test_ask_where_folio_is_not_a_member_answers_through_the_response_url(harness: Harness) -> None:
    harness.slack.fail("chat.postMessage", "not_in_channel")

    await harness.command("What is covered?", channel=CHANNEL)
    await harness.settle()

    [response] = harness.slack.calls_of("response_url")
    assert "/invite @Folio" in response["text"] and response["response_type"] == "ephemeral"


async def test_direct_messages_are_refused_clearly_without_a_dm_policy(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    no_dm = {key: value for key, value in POLICY.items() if key != "dm"}
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=no_dm) as harness:
        ts = await harness.message("What is covered?", channel=DM, channel_type="im")
        await harness.settle()

        [refusal] = harness.texts(ts, channel=DM)
        assert "Direct messages are not connected to any documents" in refusal and harness.model.requests == []


async def test_a_thread_stops_when_its_channel_is_disconnected(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.script(tools(search("balance billing")), reply("Protected [S1]."))
    async with running_app(slack, fake_model, redis_url, corpus_index) as harness:
        ts = await harness.mention("What about balance billing?")
        await harness.settle()
        conversation = await harness.store.load(harness.thread_key(ts))
    disconnected = {**POLICY, "channels": {}}  # a channel moved to other documents: see test_policy_today.py
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=disconnected) as harness:
        await harness.store.save(harness.thread_key(ts), conversation)

        await harness.message("And out of network?", thread_ts=ts)
        await harness.settle()

        assert harness.texts(ts)[-1] == (
            "This channel is not connected to any documents. An admin can connect it by adding C0BENEFIT1 with a "
            "container under `channels:` in the channel policy file."
        )
        assert harness.retriever.scopes == []


class MovingPolicy(ChannelPolicy):
    """The real policy, noting each scope it resolves; after the first, the documents move to another container (an
    admin editing the policy file while an `/ask` is on its way)."""

    _resolved: list[str] = PrivateAttr(default_factory=list)

    def scope_for(self, channel_id: str, *, is_dm: bool = False, tags: tuple[Tag, ...] = ()) -> Scope:
        self._resolved.append(channel_id)
        scope = super().scope_for(channel_id, is_dm=is_dm, tags=tags)
        return scope if len(self._resolved) == 1 else Scope(containers=("moved",), tags=scope.tags)


@pytest.mark.parametrize("channel", [CHANNEL, DM])
async def test_an_asks_scope_is_resolved_once_and_its_restatement_names_what_its_answer_searched(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, channel: str
) -> None:
    policy = MovingPolicy.model_validate(POLICY)
    fake_model.script(tools(search("balance billing")), reply("Nothing matched, so no claim."))
    async with running_app(slack, fake_model, redis_url, corpus_index, channel_policy=policy) as harness:
        await harness.command("year:2025 What about balance billing?", channel=channel)
        await harness.settle()

        restated, answer = harness.texts(ask_root(harness), channel=channel)
        assert "Searched *benefits*" in restated and "Searched *benefits*" in answer  # seen: *moved* in the answer
        assert [scope.containers for scope in harness.retriever.scopes] == [("benefits",)]
        assert policy._resolved == [channel]  # seen: twice, before the restatement and again after the lock
