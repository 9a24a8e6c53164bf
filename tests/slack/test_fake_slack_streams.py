"""The fake Slack holds Folio to Slack's stream rules (other helpers drive it too), through the real slack_sdk client."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import TEAM, FakeSlack

CARD = {"type": "task_update", "id": "t1", "title": "Searching: leave", "status": "in_progress"}


async def error_of(call: Awaitable[Any]) -> str:
    with pytest.raises(SlackApiError) as caught:
        await call
    return str(caught.value.response["error"])


async def test_a_stream_follows_slacks_rules_and_every_state_is_recorded(slack: FakeSlack) -> None:
    client = AsyncWebClient(token=slack.token, base_url=slack.base_url)
    start = {"channel": "C0BENEFIT1", "thread_ts": "1800.000001"}

    assert await error_of(client.chat_startStream(**start, chunks=[CARD])) == "missing_recipient_team_id"
    assert await error_of(client.chat_startStream(**start, recipient_team_id=TEAM, chunks=[CARD])) == (
        "missing_recipient_user_id"
    )
    bad = {**CARD, "status": "running"}
    recipient = {"recipient_team_id": TEAM, "recipient_user_id": "U0ALICE01"}
    assert await error_of(client.chat_startStream(**start, **recipient, chunks=[bad])) == "invalid_chunks"
    ts = (await client.chat_startStream(**start, **recipient, chunks=[CARD]))["ts"]
    source = {"type": "url", "text": "handbook.pdf, page 4", "url": "https://docs.example/handbook.pdf#page=4"}
    done = {**CARD, "status": "complete", "sources": [source]}
    await client.chat_appendStream(channel="C0BENEFIT1", ts=ts, chunks=[done, {"type": "markdown_text", "text": "Hi"}])
    assert await error_of(client.chat_appendStream(channel="C0BENEFIT1", ts=ts, markdown_text="x" * 12_001)) == (
        "msg_too_long"
    )
    both = {"markdown_text": "Hi", "chunks": [{"type": "markdown_text", "text": "Hi"}]}
    assert await error_of(client.chat_appendStream(channel="C0BENEFIT1", ts=ts, **both)) == "invalid_arguments"
    await client.chat_stopStream(channel="C0BENEFIT1", ts=ts, markdown_text=" there.")
    assert await error_of(client.chat_appendStream(channel="C0BENEFIT1", ts=ts, markdown_text="more")) == (
        "message_not_in_streaming_state"
    )
    assert await error_of(client.chat_stopStream(channel="C0BENEFIT1", ts="1.2")) == "message_not_found"

    views = slack.views_of("C0BENEFIT1", ts)
    assert [(v.markdown, v.streaming) for v in views] == [("", True), ("Hi", True), ("Hi there.", False)]
    assert views[1].tasks == ({**done},) and views[0].tasks[0]["status"] == "in_progress"


async def test_a_streamed_message_holds_12000_characters_in_all(slack: FakeSlack) -> None:
    client = AsyncWebClient(token=slack.token, base_url=slack.base_url)
    ts = (await client.chat_startStream(channel="D0ALICE001", thread_ts="1800.000003", markdown_text="x" * 6_000))["ts"]

    await client.chat_appendStream(channel="D0ALICE001", ts=ts, markdown_text="y" * 6_000)
    assert await error_of(client.chat_appendStream(channel="D0ALICE001", ts=ts, markdown_text="z")) == "msg_too_long"
    assert await error_of(client.chat_stopStream(channel="D0ALICE001", ts=ts, markdown_text="z")) == "msg_too_long"
    await client.chat_stopStream(channel="D0ALICE001", ts=ts)


async def test_a_direct_message_needs_no_recipient(slack: FakeSlack) -> None:
    client = AsyncWebClient(token=slack.token, base_url=slack.base_url)

    started = await client.chat_startStream(channel="D0ALICE001", thread_ts="1800.000002", markdown_text="Hello")

    assert started["ok"] and slack.thread("D0ALICE001", "1800.000002")[0].markdown == "Hello"
