"""Each Slack view says which message shows the turn (`shown_ts`), and the durable wrapper (NotedView) hears it the
moment it exists: the stream, else the placeholder; the stream holds its status line instead of being one."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.progress import StatusLineView
from bot.slack.stream import StreamMemory, Streams, StreamView
from bot.slack.turns import NotedView
from bot.store.pace import SharedPace
from bot.turns.view import SilentView, TurnView
from tests.fakes.slack_api import TEAM, FakeSlack
from tests.slack.harness import ALICE, CHANNEL

THREAD = "1700000000.000042"


@pytest.fixture
async def pace(redis_url: str) -> AsyncIterator[SharedPace]:
    redis = Redis.from_url(redis_url)
    yield SharedPace(redis, prefix=f"test-{uuid.uuid4().hex[:8]}:pace", per_minute=80, burst=20)
    await redis.aclose()


def stream_view(slack: FakeSlack, pace: SharedPace, memory: StreamMemory) -> StreamView:
    client = AsyncWebClient(token=slack.token, base_url=slack.base_url)
    return StreamView(
        client,
        channel=CHANNEL,
        thread_ts=THREAD,
        user=ALICE,
        team=TEAM,
        streams=Streams(memory=memory, pace=pace, link_for=lambda chunk: None),
    )


async def noted(view: TurnView) -> list[str]:
    heard: list[str] = []

    async def on_shown(ts: str) -> None:
        heard.append(ts)

    await NotedView(view, on_shown).working("Working on it…")
    return heard


async def test_a_stream_is_noted_the_moment_it_opens(slack: FakeSlack, pace: SharedPace) -> None:
    view = stream_view(slack, pace, StreamMemory())

    heard = await noted(view)

    [start] = [call for call in slack.calls if call.method == "chat.startStream"]
    assert heard == [view.shown_ts()] and view.shown_ts() is not None
    assert slack.views_of(CHANNEL, heard[0])[0].streaming  # the streamed message, not a placeholder
    await view.failed(RuntimeError("boom"))  # ends the stream it opened
    assert start.params["thread_ts"] == THREAD


async def test_where_streams_are_refused_the_placeholder_is_noted_instead(slack: FakeSlack, pace: SharedPace) -> None:
    memory = StreamMemory()
    memory.refuse(TEAM)  # this workspace refused a stream a moment ago
    slack.fail("assistant.threads.setStatus", "not_allowed")  # and has no thread status: a placeholder message
    view = stream_view(slack, pace, memory)

    heard = await noted(view)

    [placeholder] = slack.thread(CHANNEL, THREAD)
    assert heard == [placeholder.ts] == [view.shown_ts()]
    assert not [call for call in slack.calls if call.method == "chat.startStream"]


async def test_a_status_line_shows_no_message_until_it_posts_one_and_a_silent_view_none(slack: FakeSlack) -> None:
    client = AsyncWebClient(token=slack.token, base_url=slack.base_url)
    line = StatusLineView(client, channel=CHANNEL, thread_ts=THREAD)

    assert await noted(line) == [] and line.shown_ts() is None  # the thread status: no message of its own
    assert await noted(SilentView()) == []
