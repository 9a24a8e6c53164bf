"""A mention in a channel is answered once, in its thread, with linked citations; replies continue the chain."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import PrivateAttr

from bot.config import ChannelPolicy
from bot.models import Scope, Tag
from bot.slack.turns import run_slack_turn
from bot.turns import TurnRequest
from bot.turns.consumer import Attempt
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import BOT_ID, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, POLICY, Harness, user_ts, wait_until


def answer_script(topic: str = "balance billing protection", text: str = "You are protected [S1].") -> tuple:
    return tools(search(topic)), reply(text)


async def test_a_mention_is_answered_in_its_thread_with_links_to_the_page(harness: Harness) -> None:
    harness.model.script(*answer_script())

    ts = await harness.mention("What protection is there against balance billing?")
    await harness.settle()

    [answer] = harness.texts(ts)
    assert "You are protected <https://docs.example/" in answer and "#page=" in answer
    assert "*Sources*" in answer and "Applied filters: none" in answer
    statuses = [call["status"] for call in harness.slack.calls_of("assistant.threads.setStatus")]
    assert "Searching: balance billing protection" in statuses
    assert harness.slack.status_of(harness.thread_key(ts).channel, ts) == ""  # the answer's post cleared it
    assert all(status == 200 for status, _ in harness.responses)
    conversation = await harness.store.load(harness.thread_key(ts))
    assert conversation is not None and conversation.turns[0].question.startswith("What protection")


async def test_the_answer_clears_the_status_line_itself(harness: Harness) -> None:
    """Slack clears a thread's status when the app replies in it: the turn spends no call clearing it again."""
    harness.model.script(*answer_script())

    ts = await harness.mention("What protection is there against balance billing?")
    await harness.settle()

    methods = [call.method for call in harness.slack.calls if call.method.startswith(("assistant.", "chat."))]
    statuses = [call["status"] for call in harness.slack.calls_of("assistant.threads.setStatus")]
    assert methods[-1] == "chat.postMessage" and "" not in statuses
    assert harness.slack.status_of(harness.thread_key(ts).channel, ts) == ""


async def test_a_reply_in_the_thread_continues_the_conversation_from_the_last_response(harness: Harness) -> None:
    harness.model.script(*answer_script(), reply("Yes, in network only [S1]."))
    ts = await harness.mention("What protection is there against balance billing?")
    await harness.settle()
    first = await harness.store.load(harness.thread_key(ts))

    await harness.message("Does that hold out of network?", thread_ts=ts)
    await harness.settle()

    assert harness.model.requests[-1].body["previous_response_id"] == first.last_response_id
    assert "in network only" in harness.texts(ts)[-1]
    assert len((await harness.store.load(harness.thread_key(ts))).turns) == 2


async def test_replies_in_threads_folio_never_answered_are_left_to_people(harness: Harness) -> None:
    root = await harness.message("Lunch?")
    await harness.message("Sure", thread_ts=root)
    await harness.message("no thread, no mention")
    await harness.settle()

    assert harness.model.requests == [] and harness.slack.calls_of("chat.postMessage") == []


async def test_a_duplicate_delivery_and_slack_retries_are_answered_once(harness: Harness) -> None:
    harness.model.script(*answer_script())

    ts = await harness.mention("What protection is there against balance billing?")  # app_mention + message
    retry = {"type": "app_mention", "user": "U0ALICE01", "text": "<@UFOLIOBOT> again", "ts": ts, "channel": CHANNEL}
    assert await harness.event(retry, retry=1) == 200
    await harness.settle()

    assert len(harness.texts(ts)) == 1 and len(harness.model.requests) == 2  # one turn: search, then the answer


async def test_own_and_other_bots_messages_are_ignored(harness: Harness) -> None:
    harness.model.script(*answer_script())
    ts = await harness.mention("What protection is there against balance billing?")
    await harness.settle()
    requests = len(harness.model.requests)

    await harness.message("I am Folio", thread_ts=ts, user="UFOLIOBOT", bot_id=BOT_ID)
    await harness.message("I am another bot", thread_ts=ts, user="U0OTHERBOT", bot_id="B0OTHER", subtype="bot_message")
    await harness.message("edited", thread_ts=ts, subtype="message_changed")
    await harness.settle()

    assert len(harness.model.requests) == requests and len(harness.texts(ts)) == 1


async def test_two_quick_follow_ups_run_one_after_the_other_and_chain(harness: Harness) -> None:
    harness.model.script(*answer_script())
    ts = await harness.mention("What protection is there against balance billing?")
    await harness.settle()
    harness.model.script(reply("First follow-up [S1].", latency=0.3), reply("Second follow-up [S1]."))

    await asyncio.gather(
        harness.message("And for specialists?", thread_ts=ts), harness.message("And for labs?", thread_ts=ts)
    )
    await harness.settle()

    first, second = harness.model.requests[-2], harness.model.requests[-1]
    second_chain = second.body["previous_response_id"]
    assert second_chain != first.body["previous_response_id"]  # never two turns from the same response
    conversation = await harness.store.load(harness.thread_key(ts))
    assert [turn.answer for turn in conversation.turns][1:] == ["First follow-up [1].", "Second follow-up [1]."]
    assert second_chain in conversation.turns[1].response_ids


async def test_a_reply_sent_while_the_first_answer_is_written_waits_for_it_and_chains_from_it(
    harness: Harness,
) -> None:
    harness.model.script(tools(search("balance billing protection")), reply("First answer [S1].", latency=0.5))
    ts = await harness.mention("What protection is there against balance billing?")
    await wait_until(lambda: len(harness.model.requests) >= 2)  # the first turn now waits for its final answer
    harness.model.script(reply("Follow-up answer [S1]."))

    await harness.message("Does that hold out of network?", thread_ts=ts)
    await harness.settle()

    texts = harness.texts(ts)
    assert len(texts) == 2 and "First answer" in texts[0] and "Follow-up answer" in texts[1]
    conversation = await harness.store.load(harness.thread_key(ts))
    first_final = conversation.turns[0].response_ids[-1]
    assert harness.model.requests[-1].body["previous_response_id"] == first_final
    assert conversation.last_response_id == conversation.turns[1].response_ids[-1] != first_final


async def test_the_slack_calls_of_a_turn_share_one_kept_alive_connection(harness: Harness) -> None:
    harness.model.script(*answer_script())

    await harness.mention("What protection is there against balance billing?")
    await harness.settle()

    assert len(harness.slack.calls) >= 3 and harness.slack.connections == 1


class CountingPolicy(ChannelPolicy):
    """The real policy, noting each channel it resolves a scope for."""

    _resolved: list[str] = PrivateAttr(default_factory=list)

    def scope_for(self, channel_id: str, *, is_dm: bool = False, tags: tuple[Tag, ...] = ()) -> Scope:
        self._resolved.append(channel_id)
        return super().scope_for(channel_id, is_dm=is_dm, tags=tags)


async def test_a_new_threads_scope_is_resolved_once_after_the_lock(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    policy = CountingPolicy.model_validate(POLICY)
    async with running_app(slack, fake_model, redis_url, corpus_index, channel_policy=policy) as harness:
        harness.model.script(*answer_script())
        ts = await harness.mention("What protection is there against balance billing?")
        await harness.settle()

        assert "You are protected" in harness.texts(ts)[0]
        assert policy._resolved == [CHANNEL]  # seen: twice, before the ack and again after the lock


async def test_a_delivery_run_again_edits_the_message_its_first_attempt_showed(harness: Harness) -> None:
    """The seam with the durable intake: a turn picked up again (its first worker died) reuses what it showed."""
    harness.model.script(*answer_script())
    ts = user_ts()
    assert harness.folio is not None
    shown = await harness.folio.slack.chat_postMessage(channel=CHANNEL, thread_ts=ts, text="Working on it…")
    request = TurnRequest(
        thread=harness.thread_key(ts),
        question="What protection is there against balance billing?",
        user=ALICE,
        delivery="Ev0RESUMED",
    )

    noted: list[str] = []

    async def note(ts: str) -> None:
        noted.append(ts)

    await run_slack_turn(harness.folio, request, Attempt(resumed_ts=str(shown["ts"]), lock=None, on_shown=note))

    [answer] = harness.texts(ts)  # one message: the first attempt's, now showing the answer
    assert "You are protected" in answer and harness.slack.thread(CHANNEL, ts)[0].ts == shown["ts"]
    assert set(noted) == {shown["ts"]}  # what a later attempt would edit: still that one message
