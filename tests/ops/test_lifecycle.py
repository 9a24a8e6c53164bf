"""`folio serve` starting and stopping as an orchestrator sees it: up while Slack cannot be reached yet, and a stop that
says 503 first, then takes no new events, then lets the turns in flight finish or hands them back, saying which.

Seen while testing: Slack unreachable at start was one line and rc 2, so /healthz never came up and an orchestrator
restarted Folio in a loop; a redeploy logged "stopping 0 turns that did not finish in 30 s" while 44 were cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from bot import messages
from bot.app import builders
from bot.cli.serve import check_bot_token
from bot.config import load_settings
from bot.tasks import HAND_BACK, BackgroundTasks, finish_or_hand_back
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import FakeSlack
from tests.ops.test_health import environment, get, mention, serving
from tests.ops.test_workers import ANSWER, answering
from tests.slack.harness import wait_until

__all__ = ["environment"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def relay(port: int, slack: FakeSlack) -> AsyncIterator[None]:
    """Slack becomes reachable on `port` (a TCP relay to the fake Slack) for the length of the block."""
    target = int(slack.url.rsplit(":", 1)[1])

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    server = await asyncio.start_server(connect, "127.0.0.1", port, reuse_address=True)
    try:
        yield
    finally:
        server.close()


@pytest.mark.slow  # starts a process
async def test_slack_unreachable_at_start_keeps_healthz_up_and_readyz_naming_slack_until_it_answers(
    environment: Path, monkeypatch: pytest.MonkeyPatch, slack: FakeSlack
) -> None:
    port = free_port()  # nothing listens there yet: Slack refuses the connection
    url = f"http://127.0.0.1:{port}/api/"
    monkeypatch.setenv("SLACK_API_URL", url)
    async with serving(asyncio.Event()) as (server, base):
        assert await get(f"{base}/healthz") == (200, "ok")
        status, problems = await get(f"{base}/readyz")
        while problems == f"Slack: {messages.SLACK_NOT_ASKED_YET}\n":  # its first auth.test is on its way
            await asyncio.sleep(0.05)
            status, problems = await get(f"{base}/readyz")
        assert status == 503
        assert problems == (
            f"Slack: Slack cannot be reached at SLACK_API_URL ({url}): 127.0.0.1:{port} refused the connection. "
            "Check SLACK_API_URL, and any proxy (HTTPS_PROXY) or firewall between Folio and Slack.\n"
        )
        assert not server.done()  # seen: rc 2 at once

        async with relay(port, slack):
            await wait_until(lambda: slack.calls_of("auth.test"), timeout=20)
            for _ in range(50):
                if (await get(f"{base}/readyz"))[0] == 200:
                    break
                await asyncio.sleep(0.1)
            assert await get(f"{base}/readyz") == (200, "ready")
            await mention(base, "1800.000001")
            await wait_until(lambda: slack.thread("C0SAMPLE01", "1800.000001"))


@pytest.mark.parametrize("cause", ["dns", "refused", "tls"])
async def test_slack_unreachable_names_the_real_cause_and_its_fix(
    cause: str, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    url, says = {
        "dns": (
            "https://folio-nowhere.invalid/api/",
            (
                "Slack cannot be reached at SLACK_API_URL (https://folio-nowhere.invalid/api/): the name "
                "folio-nowhere.invalid does not resolve ("
            ),
        ),
        "refused": (
            f"http://127.0.0.1:{port}/api/",
            (
                f"Slack cannot be reached at SLACK_API_URL (http://127.0.0.1:{port}/api/): 127.0.0.1:{port} "
                "refused the connection. Check SLACK_API_URL, and any proxy (HTTPS_PROXY) or firewall between "
                "Folio and Slack."
            ),
        ),
        "tls": (
            slack.base_url.replace("http:", "https:"),  # a plain HTTP server behind an https:// URL
            (
                f"Slack cannot be reached at SLACK_API_URL ({slack.base_url.replace('http:', 'https:')}): the TLS "
                f"handshake with {slack.url.removeprefix('http://')} failed ("
            ),
        ),
    }[cause]
    fixes = {
        "dns": (
            "Check the DNS and outbound network of this machine or container; SLACK_API_URL is only "
            "wrong if you changed it."
        ),
        "refused": "firewall between Folio and Slack.",
        "tls": (
            "Check the system's CA certificates (SSL_CERT_FILE) and any proxy that intercepts TLS; an "
            "http:// server behind an https:// SLACK_API_URL fails this way too."
        ),
    }
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    monkeypatch.setenv("SLACK_API_URL", url)
    settings = load_settings(None)
    async with builders.slack_http_session() as session:
        problem = await check_bot_token(builders.slack_client(settings, session), url)

    assert problem is not None and problem.startswith(says) and problem.endswith(fixes[cause]), problem


@pytest.mark.slow  # starts a process
async def test_sigterm_says_503_first_keeps_taking_events_while_the_turn_in_flight_posts_its_answer_then_stops(
    environment: Path,
    monkeypatch: pytest.MonkeyPatch,
    slack: FakeSlack,
    fake_model: FakeResponses,
    caplog: pytest.LogCaptureFixture,
) -> None:
    writing, release = threading.Event(), threading.Event()

    def hold() -> None:  # the model is writing the answer until the test lets it finish
        writing.set()
        release.wait(30)

    fake_model.respond_with(answering(hold))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_model.base_url)
    monkeypatch.setenv("FOLIO_CODE_INTERPRETER", "false")
    monkeypatch.setenv("FOLIO_STOP_DELAY", "1")  # a load balancer's probe interval
    caplog.set_level(logging.INFO, logger="bot")
    stop = asyncio.Event()
    async with serving(stop) as (server, base):
        await mention(base, "1800.000001")
        await wait_until(writing.is_set)

        stop.set()  # SIGTERM
        answered = await get(f"{base}/readyz")
        while answered[0] == 200:  # the stop is on its way
            answered = await get(f"{base}/readyz")
        assert answered == (503, messages.STOPPING_NOT_READY + "\n")  # 503 first
        await asyncio.sleep(1.5)  # past FOLIO_STOP_DELAY: the turn in flight still runs, so events are still taken
        await mention(base, "1800.000002")  # acked (200): recorded for the next process, not run by this one
        assert not server.done()
        release.set()
        assert await asyncio.wait_for(asyncio.shield(server), 30) == 0
        assert not _listening(base)

    assert any(ANSWER.split(" [")[0] in message.text for message in slack.thread("C0SAMPLE01", "1800.000001"))
    assert [message.text for message in slack.thread("C0SAMPLE01", "1800.000002")] == []  # left for the next start
    said = [record.getMessage() for record in caplog.records if record.getMessage().startswith("stopping: ")]
    assert said[:2] == [
        "stopping: /readyz answers 503; events are recorded for the next process while running turns finish",
        "stopping: 1 turns running; waiting up to 30 s for them to finish",
    ]
    assert said[2].startswith("stopping: every turn finished (")
    assert said[3] == "stopping: no new events are taken"


def _listening(base: str) -> bool:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) == 0


async def test_turns_that_outlast_the_grace_are_handed_back_by_name_and_counted_right(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tasks = BackgroundTasks()
    cancels: list[tuple[object, ...]] = []

    async def slow_turn() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError as cancelled:
            cancels.append(cancelled.args)
            raise

    for thread in ("C1/1800.000001", "C1/1800.000002", "C2/1800.000003"):
        tasks.spawn(slow_turn(), name=f"turn {thread}")
    tasks.spawn(asyncio.sleep(0.05), name="turn C3/1800.000004")  # finishes in time

    handed = await finish_or_hand_back(tasks, grace=0.5)

    assert handed == ["turn C1/1800.000001", "turn C1/1800.000002", "turn C2/1800.000003"]
    assert cancels == [(HAND_BACK,)] * 3  # a hand-back, which a turn can tell from a failure
    assert len(tasks) == 0
    assert (
        "stopping: handed back 3 turns that did not finish within 0 s: turn C1/1800.000001, turn C1/1800.000002, "
        "turn C2/1800.000003" in caplog.text
    )


async def test_a_drain_that_times_out_leaves_the_turns_running() -> None:
    # Seen: "stopping 0 turns that did not finish in 30 s" while 44 were cancelled: the timed-out drain's gather had
    # cancelled them all before they were counted.
    tasks = BackgroundTasks()
    for number in range(3):
        tasks.spawn(asyncio.sleep(60), name=f"turn {number}")

    with pytest.raises(TimeoutError):
        await tasks.drain(timeout=0.2)

    assert len(tasks) == 3
    await tasks.cancel()
