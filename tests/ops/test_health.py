"""Health: /healthz says the process is alive, /readyz whether it can answer; the embedded Redis is restarted when it
dies, and `folio serve` exits non-zero when it keeps dying.

Seen while testing: /healthz said "ok" after the embedded Redis had died, and that Redis was never restarted, so the
process looked healthy while every turn failed.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from bot import messages
from bot.app.redis_server import LOCK_FILE, RESTARTS, EmbeddedRedis, running_socket
from bot.cli.serve import ServeHooks, serve
from bot.config import load_settings
from bot.errors import ConfigurationError
from tests.conftest import ROOT
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack
from tests.ops.test_deploy_files import run_healthcheck
from tests.slack.harness import sign, wait_until

# each test starts `folio serve` or its embedded redis-server: `python3 dev.py test --quick` skips it
pytestmark = pytest.mark.slow

CHANNELS = "channels:\n  C0SAMPLE01:\n    container: sample\n"


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, slack: FakeSlack) -> Path:
    """Folio over HTTP on the fake Slack, search-only, with the embedded Redis in the returned data folder."""
    (tmp_path / "channels.yaml").write_text(CHANNELS)
    data = tmp_path / "data"
    for name, value in {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_SIGNING_SECRET": "a-secret",
        "SLACK_API_URL": slack.base_url,
        "FOLIO_DATA_DIR": str(data),
    }.items():
        monkeypatch.setenv(name, value)
    return data


@asynccontextmanager
async def serving(stop: asyncio.Event) -> AsyncIterator[tuple[asyncio.Task[int], str]]:
    """`folio serve` running on a free port, from when it says it serves (Slack asked; or, where Slack cannot be
    reached, once /healthz answers): its task and its base URL."""
    ports: list[int] = []
    served = asyncio.Event()
    server = asyncio.create_task(
        serve(
            load_settings(None),
            host="127.0.0.1",
            port=0,
            hooks=ServeHooks(stop=stop, started=ports.append, on_ready=served.set),
        )
    )
    await wait_until(lambda: (ports and served.is_set()) or server.done())
    try:
        yield server, f"http://127.0.0.1:{ports[0]}"
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.shield(server), 30)


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


async def mention(base: str, ts: str) -> None:
    event = {
        "type": "app_mention",
        "user": "U0ALICE01",
        "text": f"<@{BOT_USER}> refund window?",
        "ts": ts,
        "channel": "C0SAMPLE01",
        "event_ts": ts,
    }
    body = json.dumps({"type": "event_callback", "team_id": TEAM, "event_id": f"Ev{ts}", "event": event})
    headers = {**sign(body, secret="a-secret"), "Content-Type": "application/json"}
    async with aiohttp.ClientSession() as http, http.post(f"{base}/slack/events", data=body, headers=headers) as sent:
        assert sent.status == 200


def redis_pid(data: Path) -> int:
    return int(json.loads((data / LOCK_FILE).read_text())["redis_pid"])


async def test_readyz_answers_503_while_redis_is_down_and_healthz_stays_ok(
    environment: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    redis = await EmbeddedRedis.start(tmp_path / "outside-redis")  # a Redis server of the operator's
    monkeypatch.setenv("REDIS_URL", redis.url)
    async with serving(asyncio.Event()) as (_, base):
        port = int(base.rsplit(":", 1)[1])
        assert await get(f"{base}/readyz") == (200, "ready")
        assert await asyncio.to_thread(run_healthcheck, port) == 0  # the Dockerfile's HEALTHCHECK
        await redis.stop()

        status, problems = await get(f"{base}/readyz")

        assert status == 503 and problems.startswith("Redis: ") and messages.STORE_UNREACHABLE in problems
        assert await get(f"{base}/healthz") == (200, "ok")
        assert await asyncio.to_thread(run_healthcheck, port) != 0


async def test_a_killed_embedded_redis_is_restarted_and_turns_work_again(environment: Path, slack: FakeSlack) -> None:
    async with serving(asyncio.Event()) as (_, base):
        await mention(base, "1800.000001")
        await wait_until(lambda: slack.thread("C0SAMPLE01", "1800.000001"))
        killed = redis_pid(environment)

        os.kill(killed, signal.SIGKILL)
        await wait_until(lambda: redis_pid(environment) != killed)
        await wait_until_ready(base)
        await mention(base, "1800.000002")

        await wait_until(lambda: slack.thread("C0SAMPLE01", "1800.000002"))
    [answer] = slack.thread("C0SAMPLE01", "1800.000002")
    assert messages.NO_MODEL in json.dumps(answer.blocks) and messages.STORE_DOWN not in json.dumps(answer.blocks)


async def wait_until_ready(base: str) -> None:
    for _ in range(100):
        if (await get(f"{base}/readyz"))[0] == 200:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("never ready again")


async def test_serve_exits_non_zero_when_the_embedded_redis_keeps_dying(
    environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with serving(asyncio.Event()) as (server, _):
        for _ in range(RESTARTS + 1):
            killed = redis_pid(environment)
            os.kill(killed, signal.SIGKILL)
            await wait_until(lambda: server.done() or alive(redis_pid(environment), besides=killed))  # noqa: B023 - awaited here

        assert await asyncio.wait_for(asyncio.shield(server), 20) == 1
    assert messages.EMBEDDED_REDIS_GAVE_UP in capsys.readouterr().err


def alive(pid: int, *, besides: int) -> bool:
    """Whether `pid` (not `besides`) is a running process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return pid != besides


async def test_one_process_owns_a_data_folders_embedded_redis(tmp_path: Path) -> None:
    redis = await EmbeddedRedis.start(tmp_path)
    try:
        assert running_socket(tmp_path) == redis.socket  # what `folio doctor` pings while Folio runs
        with pytest.raises(ConfigurationError, match="already run by Folio process"):
            await EmbeddedRedis.start(tmp_path)
    finally:
        await redis.stop()
    assert running_socket(tmp_path) is None


async def test_a_redis_server_left_behind_by_a_killed_folio_is_stopped_first(tmp_path: Path) -> None:
    owner = subprocess.Popen(  # a Folio process that starts its embedded Redis, then is killed (kill -9)
        [sys.executable, "-c", RUN_EMBEDDED_REDIS, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None and owner.stdout.readline().strip() == "started"
    orphan = redis_pid(tmp_path)
    owner.kill()
    owner.wait()
    assert alive(orphan, besides=0)  # outlived its Folio, still holding the snapshot

    redis = await EmbeddedRedis.start(tmp_path)
    try:
        assert not alive(orphan, besides=0)
    finally:
        await redis.stop()


RUN_EMBEDDED_REDIS = """
import asyncio, sys
from pathlib import Path
from bot.app.redis_server import EmbeddedRedis

async def main():
    await EmbeddedRedis.start(Path(sys.argv[1]))
    print("started", flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""
