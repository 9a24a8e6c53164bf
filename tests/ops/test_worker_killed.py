"""Issue 25: a worker SIGKILLed mid-turn loses nothing. `folio serve --workers 2` on a real Redis, the turn's
workers killed while the model writes the answer; the parent starts new workers in their place (issue 32) and the turn
is finished by one of them, in the message the dead one had shown, once."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

import pytest

from bot import messages
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import FakeSlack
from tests.ops.test_workers import CHANNEL, answering, answers, env, mention, workers  # noqa: F401 (env: a fixture)
from tests.redis_process import RedisProcess
from tests.slack.harness import wait_until

pytestmark = pytest.mark.slow  # worker processes killed mid-turn: `python3 dev.py test --quick` skips it

TS = "1800000000.000001"


async def test_a_turn_whose_workers_are_killed_is_finished_by_the_next_process_once(
    env: dict[str, str],  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
    slack: FakeSlack,
    fake_model: FakeResponses,
) -> None:
    writing, release = threading.Event(), threading.Event()

    def hold() -> None:  # the first attempt is writing its answer when its worker dies
        writing.set()
        release.wait(30)

    fake_model.respond_with(answering(hold))
    with RedisProcess(tmp_path / "redis") as redis:
        async with workers({**env, "REDIS_URL": redis.url}, tmp_path) as served:
            await mention(served.base, TS)
            await wait_until(writing.is_set)
            shown = [message.ts for message in slack.thread(CHANNEL, TS)]
            for pid in served.workers:  # whichever of the two took the connection: both die without a word
                os.kill(pid, signal.SIGKILL)
            await wait_until(lambda: _replaced(served.lines) == 2, timeout=60)
            assert answers(slack, TS) == 0 and len(shown) == 1  # acked, shown as "working", not answered yet
            release.set()
            await wait_until(lambda: answers(slack, TS) == 1, timeout=60)
            await asyncio.sleep(2)  # a second attempt would post now
            served.process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(served.process.wait(), 60) == 0

    thread = slack.thread(CHANNEL, TS)
    assert [message.ts for message in thread] == shown  # the message the dead worker showed now holds the answer
    assert answers(slack, TS) == 1 and messages.TURN_GAVE_UP not in thread[0].text


def _replaced(lines: list[str]) -> int:
    return sum("serves in place of the one that stopped" in line for line in lines)
