"""`folio serve` with the .env files operators really write: every start-up problem is one line naming the variable.

Seen while testing: `SLACK_BOT_TOKEN=` left empty in `.env` (a copied template's usual state) ended `folio serve`
with a Bolt traceback instead of chatting in the terminal.
"""

from __future__ import annotations

import io
import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bot import messages
from bot.cli import main
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app

CHANNELS = "channels:\n  C0SAMPLE01:\n    container: sample\n"
TEMPLATE = "SLACK_BOT_TOKEN=\nSLACK_SIGNING_SECRET=\nSLACK_APP_TOKEN=\nOPENAI_API_KEY=\nREDIS_URL=\nPORT=\n"


def write_env(folder: Path, **values: str) -> None:
    (folder / ".env").write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    (folder / "channels.yaml").write_text(CHANNELS)


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The one `folio: ...` line serve ended with; never a traceback."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    [line] = [line for line in err.splitlines() if line.startswith("folio: ")]
    return line


def test_an_empty_token_in_a_copied_template_means_terminal_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".env").write_text(TEMPLATE)
    monkeypatch.setattr("sys.stdin", io.StringIO("exit\n"))

    assert main(["serve"]) == 0

    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == messages.SLACK_NOT_CONFIGURED
    assert "Traceback" not in captured.err


@pytest.mark.slow  # starts a process
def test_without_slack_tokens_or_a_terminal_serve_says_what_to_set_instead_of_exiting_0(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(TEMPLATE)  # a container started without -i: stdin is /dev/null
    env = {name: value for name, value in os.environ.items() if not name.startswith(("SLACK_", "FOLIO_"))}
    ended = subprocess.run(
        [sys.executable, "-m", "bot", "serve"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert ended.returncode == 2, ended  # a supervisor that restarts it shows this line, not a silent loop
    assert ended.stderr.strip() == f"folio: {messages.SLACK_NOT_CONFIGURED_NO_TERMINAL}"


@pytest.fixture
def slack_env(tmp_path: Path, slack: FakeSlack, redis_url: str) -> dict[str, str]:
    (tmp_path / "data").mkdir(mode=0o700)  # an existing data folder: Folio says nothing about it
    return {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_API_URL": slack.base_url,
        "REDIS_URL": redis_url,
        "SLACK_SIGNING_SECRET": "a-signing-secret",
        "FOLIO_DATA_DIR": str(tmp_path / "data"),
    }


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"SLACK_SIGNING_SECRET": ""}, "SLACK_SIGNING_SECRET is not set"),
        ({"SLACK_BOT_TOKEN": "xoxb-revoked"}, "Slack refused SLACK_BOT_TOKEN (invalid_auth)"),
        ({"SLACK_APP_TOKEN": "xapp-wrong"}, "Slack refused SLACK_APP_TOKEN (invalid_auth)"),
        ({"REDIS_URL": "localhost:6379"}, "REDIS_URL is not a Redis URL"),
        ({"FOLIO_LOG_LEVEL": "loud"}, "Invalid setting: FOLIO_LOG_LEVEL"),
    ],
)
def test_each_start_up_problem_is_one_line_naming_the_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str], changed: dict[str, str], named: str
) -> None:
    write_env(tmp_path, **{**slack_env, **changed})

    assert main(["serve"]) == 2

    assert named in one_line(capsys)


def test_an_unreachable_redis_is_one_line_naming_redis_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str]
) -> None:
    write_env(tmp_path, **{**slack_env, "REDIS_URL": f"unix://{tmp_path}/no-redis.sock"})

    assert main(["serve"]) == 2

    assert "Check REDIS_URL" in one_line(capsys)


@pytest.mark.parametrize("variable", ["PORT", "FOLIO_METRICS_PORT"])
def test_a_port_in_use_is_one_line_naming_its_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str], variable: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        write_env(tmp_path, **{**slack_env, variable: port})

        assert main(["serve"]) == 2

    assert f"Port {port} on 0.0.0.0 is in use: set {variable} to a free port." in one_line(capsys)


@pytest.mark.slow  # starts a process
def test_a_blank_signing_secret_is_unset_not_a_secret_that_refuses_every_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_env(tmp_path, **{**slack_env, "SLACK_SIGNING_SECRET": ""})
    monkeypatch.setenv("SLACK_SIGNING_SECRET", " ")  # seen: `folio serve` served, and refused every signed event

    assert main(["doctor", "--json"]) == 1  # doctor says what serve says (serve would run until stopped)

    [events] = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["part"] == "slack events"]
    assert events["status"] == "fail" and "SLACK_SIGNING_SECRET is unset" in events["summary"]


def test_a_key_pasted_with_its_newline_reaches_the_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fake_model: FakeResponses
) -> None:
    fake_model.api_key = "sk-the-key"
    fake_model.script(tools(search("refund window")), reply("14 days [S1]."))
    for name, value in {
        "OPENAI_API_KEY": "sk-the-key\n",
        "OPENAI_BASE_URL": f" {fake_model.base_url} ",
        "FOLIO_CODE_INTERPRETER": "false",
    }.items():
        monkeypatch.setenv(
            name, value
        )  # seen: "Connection error", quoted passages for ever, doctor blaming the network

    assert main(["ask", "What is the refund window?", "--json"]) == 0

    assert json.loads(capsys.readouterr().out)["mode"] == "model"


async def test_a_token_in_the_environment_starts_slack_without_a_warning_about_it(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)  # as Docker, compose.yaml and systemd pass it
    caplog.set_level(logging.WARNING)
    async with running_app(slack, fake_model, redis_url, corpus_index):
        pass

    assert not [record.getMessage() for record in caplog.records if record.name.startswith("folio.slack")]


POLICY_FILES = {  # what FOLIO_CHANNELS_FILE names -> what the one line says (seen: tracebacks, a three-line error)
    "a folder": (None, "cannot be read"),
    "not UTF-8": (b"\xff\xfe\x00channels:", "cannot be read"),
    "broken YAML": (b"channels: [C0SAMPLE01,\n", "line 2: not valid YAML"),
}


@pytest.mark.parametrize("case", POLICY_FILES, ids=list(POLICY_FILES))
@pytest.mark.slow  # starts a process
def test_a_channel_policy_file_that_cannot_be_read_is_one_line_in_serve_and_doctor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str], case: str
) -> None:
    content, says = POLICY_FILES[case]
    policy = tmp_path / "policy"
    policy.mkdir() if content is None else policy.write_bytes(content)
    write_env(tmp_path, **{**slack_env, "FOLIO_CHANNELS_FILE": str(policy)})

    assert main(["serve"]) == 2
    line = one_line(capsys)
    assert str(policy) in line and says in line

    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert any(shown.startswith(f"FAIL  channel policy  {line.removeprefix('folio: ')}") for shown in out.splitlines())


@pytest.mark.parametrize("command", [["serve"], ["search", "refund"], ["doctor"]])
def test_an_env_file_saved_as_utf16_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    (tmp_path / ".env").write_text("SLACK_BOT_TOKEN=xoxb-1\n", encoding="utf-16")  # Windows Notepad's "Unicode"

    assert main(command) in (1, 2)  # seen: a UnicodeDecodeError traceback from every command

    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert ".env is not UTF-8 text" in captured.out + captured.err


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_a_port_out_of_range_on_the_command_line_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str], port: str
) -> None:
    write_env(tmp_path, **slack_env)

    with pytest.raises(SystemExit) as exited:  # seen: an OverflowError traceback from bind()
        main(["serve", "--port", port])

    assert exited.value.code == 2
    assert f"argument --port: {port} is not a port number (0-65535)" in capsys.readouterr().err


@pytest.mark.parametrize("host", ["nosuchhost.invalid", "192.0.2.1"])  # no such name; an address of another machine
def test_a_host_that_cannot_be_listened_on_names_host_not_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str], host: str
) -> None:
    write_env(tmp_path, **slack_env)

    assert main(["serve", "--host", host]) == 2

    line = one_line(capsys)  # seen: "Port 3000 on nosuchhost.invalid cannot be used ...: set PORT to a free port."
    assert f"Cannot listen on {host}" in line and "--host" in line and "set PORT" not in line


@pytest.mark.slow  # starts a process
def test_quotes_that_docker_run_env_file_keeps_around_a_value_are_not_part_of_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], slack: FakeSlack
) -> None:
    # `docker run --env-file .env` (README) passes `SLACK_BOT_TOKEN="xoxb-..."` with its quotes; dotenv drops them
    monkeypatch.setenv("SLACK_BOT_TOKEN", f'"{slack.token}"')  # seen: "Slack refused SLACK_BOT_TOKEN (invalid_auth)"
    monkeypatch.setenv("SLACK_API_URL", f"'{slack.base_url}'")

    main(["doctor", "--json"])

    [check] = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["part"] == "slack"]
    assert check["summary"].startswith("workspace Folio Test"), check
