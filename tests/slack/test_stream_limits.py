"""Slack's rate tier for streams (chat.startStream: about 20 a minute per workspace): turns past it are posted at
once, every one answered, and streams resume once Retry-After has passed, not an hour later. chat.postMessage (about
one a second per channel, short bursts): Folio keeps that pace per channel, and backs off on 429 all the same."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from bot.app.slack_calls import ChannelPacer
from tests.fakes.openai_responses import FakeResponses, reply
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL

OTHER = "C0HRONLY01"  # another channel of harness.POLICY
# Slack: chat.postMessage about one a second per channel, short bursts allowed. Five times faster keeps it short.
RATE, BURST = 5.0, 3
WINDOW = 6.0  # Slack's window is a minute; a shorter one keeps the test short, the rule is the same


async def test_a_burst_past_the_stream_tier_is_answered_on_the_posted_path_and_streams_resume(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(lambda request: reply("Covered in network."))
    slack.tier("chat.startStream", per_window=20, window=WINDOW)
    async with running_app(slack, fake_model, redis_url, corpus_index, streaming=True) as app:
        started = time.monotonic()
        burst = [await app.mention(f"Question {n}?") for n in range(60)]
        await app.settle()
        took = time.monotonic() - started
        streamed = len(slack.calls_of("chat.stopStream"))
        posted = [call for call in slack.calls_of("chat.postMessage") if call.get("thread_ts") in burst]

        await asyncio.sleep(WINDOW + 0.5)  # Retry-After has passed
        later = await app.mention("And now?")
        await app.settle()

    assert all("Covered in network." in app.texts(ts)[-1] for ts in burst)
    assert streamed >= 20 and len(posted) == 60 - streamed  # each answer shown once, one way or the other
    assert took < 20  # no turn waited for the rate limit (the SDK would sleep Retry-After, up to 3 times)
    assert len(slack.calls_of("chat.stopStream")) == streamed + 1  # the next window streams again
    assert "Covered in network." in app.texts(later)[-1]
    assert all(call["channel"] == CHANNEL for call in slack.calls_of("chat.startStream"))


async def test_a_burst_of_answers_in_one_channel_backs_off_on_429_and_all_are_posted(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(lambda request: reply("Covered in network."))
    slack.tier("chat.postMessage", per_window=5, window=2.0)  # Slack: about one a second per channel, short bursts
    async with running_app(slack, fake_model, redis_url, corpus_index) as app:
        burst = [await app.mention(f"Question {n}?") for n in range(10)]
        await app.settle()

    assert all("Covered in network." in app.texts(ts)[-1] for ts in burst)
    assert len(slack.calls_of("chat.postMessage")) > 10  # some were answered 429 and sent again after Retry-After


async def test_a_burst_of_answers_in_one_channel_keeps_slacks_pace_per_channel_and_no_429(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(lambda request: reply("Covered in network."))
    slack.tier("chat.postMessage", per_window=BURST + int(RATE), window=1.0, per_channel=True)
    pacer = ChannelPacer(per_second=RATE, burst=BURST)
    async with running_app(slack, fake_model, redis_url, corpus_index, pacer=pacer) as app:
        started = time.monotonic()
        *asked, other = await asyncio.gather(
            *(app.mention(f"Question {n}?") for n in range(15)), app.mention("Elsewhere?", channel=OTHER)
        )
        await app.settle()

    here, there = _posted(slack, CHANNEL), _posted(slack, OTHER)
    assert all("Covered in network." in app.texts(ts)[-1] for ts in asked)
    assert "Covered in network." in app.texts(other, channel=OTHER)[-1]
    assert slack.limited == [] and len(here) == 15 and len(there) == 1  # none answered 429 and sent again
    _assert_paced(here)
    assert here[-1] - started >= (15 - BURST) / RATE  # paced: 2.4 s at least
    assert there[0] < here[-1] - 1.0  # the other channel did not wait behind this one's queue


async def test_a_burst_of_ask_commands_in_one_channel_keeps_slacks_pace_and_no_429(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(lambda request: reply("Covered in network."))
    slack.tier("chat.postMessage", per_window=BURST + int(RATE), window=1.0, per_channel=True)
    pacer = ChannelPacer(per_second=RATE, burst=BURST)
    async with running_app(slack, fake_model, redis_url, corpus_index, pacer=pacer) as app:
        answers = await asyncio.gather(*(app.command(f"Question {n}?") for n in range(8)))
        await app.settle()

    assert [status for status, _ in answers] == [200] * 8
    assert slack.limited == []  # the questions Bolt's own client posts keep the pace too
    _assert_paced(_posted(slack, CHANNEL))


def _posted(slack: FakeSlack, channel: str) -> list[float]:
    """When the fake received each chat.postMessage of `channel`, in order."""
    posts = [call for call in slack.calls if call.method == "chat.postMessage"]
    return sorted(call.at for call in posts if call.params["channel"] == channel)


def _assert_paced(times: list[float]) -> None:
    """Any stretch of posts: no more than the burst plus the rate times its length (0.1 s: from the pacer to the
    fake)."""
    for first in range(len(times)):
        for last in range(first, len(times)):
            assert last - first + 1 <= BURST + (times[last] - times[first] + 0.1) * RATE
