"""`folio serve --workers N`: processes sharing the HTTP port and one Redis, through the real Bolt app and the fakes.

Each test runs the real command in a child process (the parent and its workers), on the embedded defaults (the
parent's embedded Redis, the sample corpus) with the fake Slack and the fake model in this process.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest

from tests.conftest import ROOT
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, search, tools
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack
from tests.ops.test_health import redis_pid
from tests.ops.test_metrics import parse
from tests.redis_process import RedisProcess
from tests.slack.harness import sign, wait_until

pytestmark = pytest.mark.slow  # starts processes: `python3 dev.py test --quick` skips it

CHANNEL = "C0SAMPLE01"
SECRET = "a-signing-secret"
ANSWER = "Refunds are accepted within 30 days [S1]."
LISTENING = re.compile(r"listening for Slack on (http://\S+)/slack/events \(2 workers: processes (\d+), (\d+)\)")


@dataclass
class Served:
    """A running `folio serve --workers 2`: its process, base URL, worker ids and every stderr line so far."""

    process: asyncio.subprocess.Process
    base: str = ""
    workers: tuple[int, int] = (0, 0)
    lines: list[str] = field(default_factory=list)

    def turn_records(self) -> list[dict]:
        records = [json.loads(line) for line in self.lines if line.startswith("{")]
        return [record for record in records if record.get("message") == "turn"]


@pytest.fixture
def env(tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses) -> dict[str, str]:
    (tmp_path / "channels.yaml").write_text(f"channels:\n  {CHANNEL}:\n    container: sample\n")
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "OPENAI_API_KEY": "sk-fake",
        "OPENAI_BASE_URL": fake_model.base_url,
        "FOLIO_CODE_INTERPRETER": "false",
        "FOLIO_DATA_DIR": str(tmp_path / "data"),
        "FOLIO_LOG_FORMAT": "json",
    }


def answering(before_answer: Callable[[], None] = lambda: None) -> Callable[[Request], Step]:
    """The fake model's turn: one search, then an answer citing it (`before_answer` runs first, in the fake)."""

    def respond(request: Request) -> Step:
        if not request.tool_outputs:
            return tools(search("refund window"))
        before_answer()
        return reply(ANSWER)

    return respond


@asynccontextmanager
async def workers(env: dict[str, str], cwd: Path, *, port: int = 0) -> AsyncIterator[Served]:
    """`folio serve --workers 2` on `port` (a free one by default), until it has said that both workers serve."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "2",
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    served = Served(process)
    reading = asyncio.create_task(_read_lines(process, served.lines))
    try:
        await wait_until(lambda: any(LISTENING.search(line) for line in served.lines) or reading.done(), timeout=90)
        found = next((m for line in served.lines if (m := LISTENING.search(line))), None)
        assert found, "\n".join(served.lines)
        served.base, served.workers = found.group(1), (int(found.group(2)), int(found.group(3)))
        yield served
    finally:
        if process.returncode is None:  # a test that failed: stop it as an operator would
            process.terminate()
        await asyncio.wait_for(process.wait(), 60)
        await asyncio.wait_for(reading, 60)  # its workers have stopped too: nothing holds stderr open


async def _read_lines(process: asyncio.subprocess.Process, lines: list[str]) -> None:
    assert process.stderr is not None
    async for line in process.stderr:
        lines.append(line.decode(errors="replace").rstrip())


async def mention(base: str, ts: str) -> None:
    """One @mention, signed, on a connection of its own (the kernel picks the worker for each connection)."""
    event = {
        "type": "app_mention",
        "user": "U0ALICE01",
        "text": f"<@{BOT_USER}> what is the refund window?",
        "ts": ts,
        "channel": CHANNEL,
        "event_ts": ts,
    }
    body = json.dumps({"type": "event_callback", "team_id": TEAM, "event_id": f"Ev{ts}", "event": event})
    headers = {**sign(body, secret=SECRET), "Content-Type": "application/json"}
    async with aiohttp.ClientSession() as http, http.post(f"{base}/slack/events", data=body, headers=headers) as sent:
        assert sent.status == 200


def answers(slack: FakeSlack, ts: str) -> int:
    return sum(ANSWER.split(" [")[0] in message.text for message in slack.thread(CHANNEL, ts))


async def scrape(base: str) -> dict:
    async with aiohttp.ClientSession() as http, http.get(f"{base}/metrics") as response:
        return parse(await response.text())


async def test_two_workers_answer_mentions_and_metrics_add_up_across_them(
    env: dict[str, str], tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    fake_model.respond_with(answering())
    async with workers(env, tmp_path) as served:
        asked: list[str] = []
        # Until both workers have answered (the kernel spreads connections; 40 in a row to one would be 1 in 10^12).
        while len(asked) < 40 and len({r["process"] for r in served.turn_records()}) < 2:
            ts = f"1800000000.{len(asked) + 1:06d}"
            await mention(served.base, ts)
            asked.append(ts)
            await wait_until(lambda: answers(slack, ts) == 1 and len(served.turn_records()) == len(asked))  # noqa: B023 - awaited here
        scrapes = [await scrape(served.base) for _ in range(4)]  # each on its own connection, to either worker

    assert {record["process"] for record in served.turn_records()} == set(served.workers)
    assert all(answers(slack, ts) == 1 for ts in asked)  # each mention answered once (its message twin was not sent)
    answered = ("folio_turns_total", frozenset({("outcome", "answered"), ("profile", "fast")}))
    assert [samples[answered] for samples in scrapes] == [len(asked)] * 4


async def test_sigterm_mid_turn_lets_the_turn_post_its_answer_then_every_process_exits(
    env: dict[str, str], tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    writing, release = threading.Event(), threading.Event()

    def hold() -> None:  # the model is writing the answer until the test lets it finish
        writing.set()
        release.wait(30)

    fake_model.respond_with(answering(hold))
    async with workers(env, tmp_path) as served:
        await mention(served.base, "1800000000.000001")
        await wait_until(writing.is_set)
        served.process.send_signal(signal.SIGTERM)
        await wait_until(lambda: sum("events are recorded for the next process" in line for line in served.lines) == 2)
        release.set()
        code = await asyncio.wait_for(served.process.wait(), 60)

    assert code == 0
    assert answers(slack, "1800000000.000001") == 1
    assert not any(_alive(pid) for pid in served.workers)
    assert not _listening(served.base)


async def test_a_question_sent_while_folio_drains_is_acked_and_answered_by_the_next_start(
    env: dict[str, str], tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    # Seen (issue 32): on SIGTERM the port closed at once and stayed closed for the drain and the next start (7-16 s),
    # every delivery meanwhile refused. Now the draining workers record what comes and leave it to the next start.
    writing, release = threading.Event(), threading.Event()

    def hold() -> None:
        writing.set()
        release.wait(30)

    fake_model.respond_with(answering(hold))
    with RedisProcess(tmp_path / "redis") as redis:
        served_env = {**env, "REDIS_URL": redis.url}
        async with workers(served_env, tmp_path) as served:
            await mention(served.base, "1800000000.000001")
            await wait_until(writing.is_set)
            served.process.send_signal(signal.SIGTERM)
            await wait_until(lambda: any("events are recorded for the next process" in line for line in served.lines))
            during = await deliver(served.base, "1800000000.000002")
            release.set()
            assert await asyncio.wait_for(served.process.wait(), 60) == 0
        assert answers(slack, "1800000000.000002") == 0  # recorded, not run by a process on its way out

        async with workers(served_env, tmp_path) as again:  # the redeploy's new start
            await wait_until(lambda: answers(slack, "1800000000.000002") == 1, timeout=30)
            await asyncio.sleep(1)  # a second answer would show now
            again.process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(again.process.wait(), 60)

    assert during == "acked"
    assert answers(slack, "1800000000.000001") == 1 and answers(slack, "1800000000.000002") == 1


async def deliver(base: str, ts: str) -> str:
    """One @mention as Slack sends it, retried at once when not acked: "acked", "acked on the retry", or how the
    retry failed ("refused": nothing listened on the port)."""
    outcome = await _post_mention(base, ts, retry=False)
    if outcome == "acked":
        return outcome
    retried = await _post_mention(base, ts, retry=True)
    return "acked on the retry" if retried == "acked" else retried


async def _post_mention(base: str, ts: str, *, retry: bool) -> str:
    event = {
        "type": "app_mention",
        "user": "U0ALICE01",
        "text": f"<@{BOT_USER}> what is the refund window?",
        "ts": ts,
        "channel": CHANNEL,
        "event_ts": ts,
    }
    body = json.dumps({"type": "event_callback", "team_id": TEAM, "event_id": f"Ev{ts}", "event": event})
    headers = {**sign(body, secret=SECRET), "Content-Type": "application/json"}
    if retry:
        headers |= {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_error"}
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"{base}/slack/events", data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=3)
            ) as sent,
        ):
            return "acked" if sent.status == 200 else f"HTTP {sent.status}"
    except aiohttp.ClientConnectorError:
        return "refused"
    except (aiohttp.ClientError, TimeoutError) as exc:  # the worker died while answering this one
        return f"dropped ({type(exc).__name__})"


async def test_a_killed_worker_is_replaced_while_the_other_serves_and_no_delivery_is_refused(
    env: dict[str, str], tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    # Seen (issue 32): a worker's death stopped the other one too; the port was closed 7-37 s, deliveries refused.
    fake_model.respond_with(answering())
    async with workers(env, tmp_path) as served:
        outcomes: dict[str, str] = {}
        probes: list[str] = []
        loading = asyncio.Event()

        async def load() -> None:  # a mention every 50 ms, each on its own connection, and /healthz between them
            number = 0
            while not loading.is_set():
                number += 1
                ts = f"1800000000.{number:06d}"
                outcomes[ts] = "pending"
                asyncio.ensure_future(deliver(served.base, ts)).add_done_callback(
                    lambda done, ts=ts: outcomes.__setitem__(ts, done.result())
                )
                probes.append(await _probe(served.base))
                await asyncio.sleep(0.05)

        loader = asyncio.create_task(load())
        await asyncio.sleep(2)
        os.kill(served.workers[0], signal.SIGKILL)
        await wait_until(
            lambda: any("serves in place of the one that stopped" in line for line in served.lines), timeout=60
        )
        await asyncio.sleep(2)
        loading.set()
        await loader
        await wait_until(lambda: "pending" not in outcomes.values(), timeout=30)
        await wait_until(lambda: all(answers(slack, ts) >= 1 for ts in outcomes), timeout=60)
        await asyncio.sleep(1)  # a second answer would show now
        assert served.process.returncode is None  # Folio itself never stopped
        served.process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(served.process.wait(), 60)

    assert "refused" not in probes and "refused" not in outcomes.values(), (probes, outcomes)
    assert [p for p in probes if p != "ready" and not p.startswith("dropped")] == []  # /readyz 200 while one serves
    assert set(outcomes.values()) <= {"acked", "acked on the retry"}, outcomes  # dropped mid-request: Slack retries
    assert [ts for ts in outcomes if answers(slack, ts) != 1] == []
    assert len(outcomes) >= 40 and code == 0
    assert any(f"worker 1 (process {served.workers[0]}) stopped with status -9" in line for line in served.lines)


async def _probe(base: str) -> str:
    try:
        async with aiohttp.ClientSession() as http, http.get(f"{base}/readyz") as response:
            return "ready" if response.status == 200 else f"HTTP {response.status}"
    except aiohttp.ClientConnectorError:
        return "refused"
    except aiohttp.ClientError as exc:
        return f"dropped ({type(exc).__name__})"


async def test_workers_stop_when_their_parent_is_killed(env: dict[str, str], tmp_path: Path) -> None:
    async with workers(env, tmp_path) as served:
        served.process.kill()  # SIGKILL: the parent cannot tell its workers anything
        await wait_until(lambda: not any(_alive(pid) for pid in served.workers), timeout=60)
    os.kill(redis_pid(tmp_path / "data"), signal.SIGTERM)  # its orphaned Redis, as the next `folio serve` would


def _listening(base: str) -> bool:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


async def test_a_worker_refusing_to_start_is_said_once_with_its_real_exit_status(
    env: dict[str, str], tmp_path: Path, slack: FakeSlack
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--workers",
        "2",
        env={**env, "SLACK_BOT_TOKEN": "xoxb-revoked"},
        cwd=tmp_path,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 90)
    lines = err.decode().splitlines()

    assert process.returncode != 0
    assert sum("Slack refused SLACK_BOT_TOKEN (invalid_auth)" in line for line in lines) == 1, lines
    assert any("worker 1 did not start (exit status 2)" in line for line in lines), lines  # seen: "none (it did
    assert not any("Traceback" in line or "Unknown child process" in line for line in lines), (
        lines
    )  # not start in time)"


def time_wait_port() -> int:
    """A port nothing listens on, with a connection Folio's side closed first still in TIME-WAIT (~60 s): what a
    stopped `folio serve` leaves behind when a keep-alive connection (a load balancer, a /readyz probe) was open."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        served, _ = listener.accept()
        served.close()  # the server's end closes first: it is the one left in TIME-WAIT
        client.recv(1)
        client.close()
    return port


async def test_workers_start_at_once_on_ports_a_stopped_folio_left_in_time_wait(
    env: dict[str, str], tmp_path: Path, fake_model: FakeResponses
) -> None:
    # Seen: "Port 13000 on 0.0.0.0 is in use" (rc 2) though nothing listened, and the same for the metrics port.
    port, metrics_port = time_wait_port(), time_wait_port()
    async with workers({**env, "FOLIO_METRICS_PORT": str(metrics_port)}, tmp_path, port=port) as served:
        assert served.base == f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{metrics_port}/healthz") as response:
            assert response.status == 200


async def test_sighup_starts_new_workers_before_stopping_the_old_ones_so_the_port_never_closes(
    env: dict[str, str], tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    fake_model.respond_with(answering())
    async with workers(env, tmp_path) as served:
        refused: list[str] = []
        probing = asyncio.Event()

        async def probe() -> None:  # a load balancer's health checks, each on a new connection, all along
            while not probing.is_set():
                try:
                    async with aiohttp.ClientSession() as http, http.get(f"{served.base}/healthz") as response:
                        await response.read()
                except aiohttp.ClientError as exc:
                    refused.append(repr(exc))
                await asyncio.sleep(0.02)

        prober = asyncio.create_task(probe())
        served.process.send_signal(signal.SIGHUP)
        await wait_until(lambda: any("reloaded: processes" in line for line in served.lines), timeout=90)
        await wait_until(lambda: not any(_alive(pid) for pid in served.workers), timeout=60)
        probing.set()
        await prober
        await mention(served.base, "1800000000.000001")
        await wait_until(lambda: answers(slack, "1800000000.000001") == 1)

    assert refused == []
    [reloaded] = [line for line in served.lines if "reloaded: processes" in line]
    said = json.loads(reloaded)["message"] if reloaded.startswith("{") else reloaded  # a JSON line in JSON mode
    new = {int(pid) for pid in re.findall(r"\d+", said.split(";")[0])}
    assert len(new) == 2 and not new & set(served.workers)
    assert {record["process"] for record in served.turn_records()} <= new


async def test_when_no_worker_can_be_started_folio_backs_off_says_so_and_stops(
    env: dict[str, str], tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    async with workers(env, tmp_path) as served:
        slack.token = "xoxb-revoked-since"  # every new worker's auth.test is refused now (exit status 2)
        for pid in served.workers:
            os.kill(pid, signal.SIGKILL)
        code = await asyncio.wait_for(served.process.wait(), 90)

    assert code == 1  # so that its supervisor (Docker, systemd) starts Folio afresh, and says why each time
    said = "\n".join(served.lines)
    assert "workers keep dying (3 in the last 60 s); the next starts in 2 s" in said, said
    assert said.count("did not start (exit status 2)") == 3, said
    assert "no worker could be started (3 tries in a row); stopping." in said
