"""Slack's ack of a question does not wait for the turns running meanwhile (issue 21, item 2: ack p99)."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from pathlib import Path

from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, envelope, sign, user_ts

HOLD = 1.0  # seconds a turn keeps the event loop to itself (a long CPU-bound step)


def post_while_held(url: str, body: str, holding: object) -> tuple[int, float, bool]:
    """From another thread, once the hold began: post `body` and time its answer; whether the hold still went on."""
    assert holding.wait(10)  # type: ignore[attr-defined]
    request = urllib.request.Request(
        url, data=body.encode(), headers={"Content-Type": "application/json", **sign(body)}
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=10) as response:
        status = response.status
    return status, time.monotonic() - started, holding.is_set()  # type: ignore[attr-defined]


async def test_a_question_is_acknowledged_while_a_turn_holds_the_event_loop(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    async with running_app(slack, fake_model, redis_url, corpus_index, with_model=False) as harness:
        harness.retriever.hold = HOLD  # the first turn's search keeps the loop for a second
        first = await harness.mention("What does Northwind Standard cover?")
        ts = user_ts()
        question = {"type": "app_mention", "user": ALICE, "text": f"<@{BOT_USER}> Is there a deductible?", "ts": ts,
                    "channel": CHANNEL, "team": TEAM, "user_team": TEAM}  # fmt: skip

        status, took, held = await asyncio.to_thread(post_while_held, harness.url, envelope(question),
                                                     harness.retriever.holding)  # fmt: skip

        assert status == 200 and held, "the ack came while the other turn still held the loop"
        assert took < HOLD / 4, f"the ack took {took:.3f} s"
        await harness.settle()
        assert len(harness.texts(first)) == 1 and len(harness.texts(ts)) == 1  # both answered, once
