"""Slack's assistant container: a greeting and prompts, the channel the person views, thread titles.

assistant_view sends `assistant_thread_started` / `assistant_thread_context_changed` per thread; agent_view sends
`app_home_opened` (tab `messages`) and `app_context_changed` per person, and wants prompts set without `thread_ts`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot import messages
from bot.slack.render import ACTION_DELETE
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import TEAM, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, BOB, Harness, user_ts
from tests.slack.test_access import (
    ALICE_DM,
    BOB_DM,
    FIN_CHANNEL,
    FINANCE_GROUP,
    POLICY,
    QUESTION,
    ask_in_dm,
    finance_seen,
    searching_model,
)

PROMPTS = {"finance": [{"title": "Refunds", "message": "What is the refund window?"}]}


@pytest.fixture
async def app(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> AsyncIterator[Harness]:
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])
    slack.channel_members[FIN_CHANNEL] = [f"U0PERSON{n:02d}" for n in range(150)] + [ALICE]  # two pages
    fake_model.respond_with(searching_model)
    policy = {**POLICY, "prompts": PROMPTS}
    async with running_app(slack, fake_model, redis_url, access_index, policy=policy) as running:
        yield running


def assistant_event(kind: str, *, user: str, channel: str, thread_ts: str, viewing: str | None) -> dict[str, Any]:
    context = {"channel_id": viewing, "team_id": TEAM} if viewing else {}
    thread = {"user_id": user, "context": context, "channel_id": channel, "thread_ts": thread_ts}
    return {"type": kind, "assistant_thread": thread, "ts": user_ts()}


async def open_assistant(app: Harness, *, user: str, channel: str, viewing: str | None) -> str:
    thread_ts = user_ts()
    await app.event(
        assistant_event("assistant_thread_started", user=user, channel=channel, thread_ts=thread_ts, viewing=viewing)
    )
    await app.settle()
    return thread_ts


async def test_a_new_assistant_thread_is_greeted_with_prompts_for_what_the_person_searches(app: Harness) -> None:
    thread_ts = await open_assistant(app, user=ALICE, channel=ALICE_DM, viewing=None)

    [greeting] = app.texts(thread_ts, ALICE_DM)
    assert greeting.startswith("Hi!") and "*finance*, *handbook*" in greeting
    offered = app.slack.prompts[(ALICE_DM, thread_ts)]
    assert offered["prompts"] == [
        {"title": "Refunds", "message": "What is the refund window?"},  # from the policy's prompts:
        {"title": "About handbook", "message": "What do the handbook documents cover?"},  # the default
    ]


async def test_beside_a_connected_channel_they_belong_to_the_assistant_searches_that_channel(app: Harness) -> None:
    thread_ts = await open_assistant(app, user=ALICE, channel=ALICE_DM, viewing=None)
    changed = assistant_event(
        "assistant_thread_context_changed", user=ALICE, channel=ALICE_DM, thread_ts=thread_ts, viewing=FIN_CHANNEL
    )
    await app.event(changed)

    await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM, thread_ts=thread_ts)

    assert app.retriever.scopes[-1].containers == ("finance",)
    assert f"as in <#{FIN_CHANNEL}>, the channel you are viewing" in app.texts(thread_ts, ALICE_DM)[-1]
    assert app.slack.titles[(ALICE_DM, thread_ts)] == QUESTION  # the first question names the thread


async def test_beside_a_channel_they_are_not_in_the_assistant_keeps_to_their_own_access(app: Harness) -> None:
    thread_ts = await open_assistant(app, user=BOB, channel=BOB_DM, viewing=FIN_CHANNEL)

    await ask_in_dm(app, QUESTION, user=BOB, channel=BOB_DM, thread_ts=thread_ts)

    assert [scope.containers for scope in app.retriever.scopes] == [("handbook",)]
    assert finance_seen(app) == []
    assert "Searched *handbook* (what you may read)" in app.texts(thread_ts, BOB_DM)[-1]


async def test_only_the_first_question_names_the_thread(app: Harness) -> None:
    thread_ts = await open_assistant(app, user=ALICE, channel=ALICE_DM, viewing=None)

    await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM, thread_ts=thread_ts)
    await ask_in_dm(app, "And monthly plans?", user=ALICE, channel=ALICE_DM, thread_ts=thread_ts)

    assert [call["title"] for call in app.slack.calls_of("assistant.threads.setTitle")] == [QUESTION]


async def test_agent_view_prompts_come_without_thread_ts_and_the_viewed_channel_is_per_person(app: Harness) -> None:
    await app.event({"type": "app_home_opened", "user": ALICE, "channel": ALICE_DM, "tab": "messages", "ts": user_ts()})
    await app.event({"type": "app_home_opened", "user": ALICE, "channel": ALICE_DM, "tab": "home", "ts": user_ts()})
    entity = {"type": "slack#/types/channel_id", "value": FIN_CHANNEL, "team_id": TEAM}
    await app.event({"type": "app_context_changed", "user": ALICE, "context": {"entities": [entity]}, "ts": user_ts()})
    await app.settle()

    [offer] = app.slack.calls_of("assistant.threads.setSuggestedPrompts")
    assert "thread_ts" not in offer and offer["prompts"][0]["title"] == "Refunds"
    ts = await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM)
    assert app.retriever.scopes[-1].containers == ("finance",)
    assert f"<#{FIN_CHANNEL}>" in app.texts(ts, ALICE_DM)[-1]
    assert app.slack.calls_of("assistant.threads.setTitle") == []  # not an assistant thread


@pytest.fixture
async def streaming_app(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> AsyncIterator[Harness]:
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])
    slack.channel_members[FIN_CHANNEL] = [ALICE]
    fake_model.respond_with(searching_model)
    async with running_app(slack, fake_model, redis_url, access_index, policy=POLICY, streaming=True) as running:
        yield running


async def test_an_assistant_thread_streams_its_search_and_answer_and_says_which_scope(streaming_app: Harness) -> None:
    app = streaming_app
    thread_ts = await open_assistant(app, user=ALICE, channel=ALICE_DM, viewing=FIN_CHANNEL)

    await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM, thread_ts=thread_ts)

    [start] = app.slack.calls_of("chat.startStream")
    assert (start["channel"], start["thread_ts"], start["recipient_user_id"]) == (ALICE_DM, thread_ts, ALICE)
    [answer] = [m for m in app.slack.thread(ALICE_DM, thread_ts) if m.stream is not None]
    final = app.slack.views_of(ALICE_DM, answer.ts)[-1]
    searches = [task for task in final.tasks if task["title"].startswith("Searching:")]
    assert searches and searches[0]["status"] == "complete" and searches[0]["sources"]  # the pages it found
    assert "Here is what I found [[1]](" in answer.markdown  # the checked citation, as a stream link
    assert f"as in <#{FIN_CHANNEL}>, the channel you are viewing" in json.dumps(answer.blocks)  # the scope used
    assert app.retriever.scopes[-1].containers == ("finance",)


async def test_ask_filters_narrow_the_viewed_channels_scope_too(app: Harness) -> None:
    """Beside a channel, a DM's `/ask year:2026 ...` searched every year of that channel: the viewed channel's
    scope was taken as it stands, the person's filter dropped without a word."""
    entity = {"type": "slack#/types/channel_id", "value": FIN_CHANNEL, "team_id": TEAM}
    await app.event({"type": "app_context_changed", "user": ALICE, "context": {"entities": [entity]}, "ts": user_ts()})
    await app.settle()

    await app.command(f"year:2026 {QUESTION}", channel=ALICE_DM, user=ALICE)
    await app.settle()
    [root] = [m.ts for m in app.slack.messages.values() if m.channel == ALICE_DM and m.thread_ts is None]
    await ask_in_dm(app, "And monthly plans?", user=ALICE, channel=ALICE_DM, thread_ts=root)

    searched = [(scope.containers, [str(tag) for tag in scope.tags]) for scope in app.retriever.scopes]
    assert searched == [(("finance",), ["year:2026"])] * 2


async def test_deleting_an_assistant_conversation_clears_its_title_greeting_and_every_key_of_the_thread(
    app: Harness, redis_url: str
) -> None:
    # Issue 18, item 7: the first question stayed as the thread's title in Slack's history list, with the greeting
    # and the thread's access and title keys in Redis for 30 days.
    thread_ts = await open_assistant(app, user=ALICE, channel=ALICE_DM, viewing=FIN_CHANNEL)
    await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM, thread_ts=thread_ts)
    assert app.slack.titles[(ALICE_DM, thread_ts)] == QUESTION
    answer = app.slack.thread(ALICE_DM, thread_ts)[-1]

    await app.click(ACTION_DELETE, thread_ts=thread_ts, message_ts=answer.ts, channel=ALICE_DM)
    await app.settle()

    assert app.texts(thread_ts, ALICE_DM) == []  # the greeting too
    assert app.slack.titles[(ALICE_DM, thread_ts)] == messages.DELETED_TITLE
    redis = Redis.from_url(redis_url)
    left = [key.decode() async for key in redis.scan_iter(match=f"*{thread_ts}*")]
    await redis.aclose()
    # Dedupe markers of deliveries expire on their own, and so does the lock's fence (a counter, kept for a day so
    # that a stale holder of the thread's lock stays fenced off after the thread is deleted; issue 25).
    assert [key for key in left if ":seen:" not in key and not key.endswith(":fence")] == []
