"""Every stderr line of `folio serve` in JSON mode is JSON; start-up warnings are said once; DEBUG holds no content.

Seen while testing (issue 23, finding 6): with FOLIO_LOG_FORMAT=json one "listening" line was plain text; a start-up
warning came once per worker with `--workers 2`; DEBUG logged the whole answer text (the libraries' request and
response bodies) although the README promises no questions or answers in the logs without FOLIO_LOG_CONTENT.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import signal
import sys
from pathlib import Path

import pytest

from bot import logs
from bot.cli import main
from bot.config import Settings
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.ops.test_logs import QUESTION
from tests.ops.test_metrics import free_port  # noqa: F401  (a fixture)
from tests.ops.test_startup import write_env
from tests.ops.test_workers import env, workers  # noqa: F401  (env: a fixture)
from tests.slack.conftest import running_app
from tests.slack.harness import SECRET, wait_until

NO_LINKS = "citations carry no links"


def not_json(lines: list[str]) -> list[str]:
    wrong = []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            wrong.append(line)
    return wrong


@pytest.mark.slow  # starts a process
async def test_one_process_writes_only_json_lines(
    env: dict[str, str],  # noqa: F811  (fixtures)
    tmp_path: Path,
    free_port: int,  # noqa: F811
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
        env={**env, "FOLIO_METRICS_PORT": str(free_port)},
        cwd=tmp_path,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    lines: list[str] = []

    async def read() -> None:
        assert process.stderr is not None
        async for line in process.stderr:
            lines.append(line.decode().rstrip())

    reading = asyncio.create_task(read())
    try:
        await wait_until(lambda: any("listening for Slack" in line for line in lines) or reading.done(), timeout=90)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
        await asyncio.wait_for(reading, 10)

    assert any("listening for Slack" in line for line in lines), lines
    assert any("/metrics, /healthz and /readyz" in line for line in lines), lines
    assert not_json(lines) == []


@pytest.mark.slow  # starts a process
async def test_workers_write_only_json_lines_and_each_start_up_warning_once(
    env: dict[str, str],  # noqa: F811  (a fixture)
    tmp_path: Path,
) -> None:
    async with workers(env, tmp_path) as served:
        served.process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(served.process.wait(), 60)

    assert not_json(served.lines) == []
    assert sum(NO_LINKS in line for line in served.lines) == 1, served.lines


def test_a_start_up_problem_is_a_json_line_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], restore_logging: None, slack: FakeSlack, redis_url: str
) -> None:
    write_env(
        tmp_path,
        SLACK_BOT_TOKEN="xoxb-revoked",
        SLACK_API_URL=slack.base_url,
        REDIS_URL=redis_url,
        SLACK_SIGNING_SECRET="a-signing-secret",
        FOLIO_DATA_DIR=str(tmp_path),
        FOLIO_LOG_FORMAT="json",
    )

    assert main(["serve"]) == 2

    [line] = [json.loads(line) for line in capsys.readouterr().err.splitlines() if "SLACK_BOT_TOKEN" in line]
    assert line["level"] == "ERROR"
    assert line["message"].startswith("folio: Slack refused SLACK_BOT_TOKEN (invalid_auth)")


@pytest.mark.parametrize("content", [False, True], ids=["without FOLIO_LOG_CONTENT", "with FOLIO_LOG_CONTENT"])
async def test_debug_holds_no_question_or_answer_without_folio_log_content(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    restore_logging: None,
    content: bool,
) -> None:
    settings = Settings(
        slack_bot_token=slack.token, slack_signing_secret=SECRET, openai_api_key="sk-fake", folio_log_content=content
    )
    written = io.StringIO()
    logs.configure(settings, verbose=True, stream=written)
    fake_model.script(tools(search("balance billing protection")), reply("Protected in network [S1]."))
    async with running_app(slack, fake_model, redis_url, corpus_index, folio_log_content=content) as harness:
        await harness.mention(QUESTION)
        await harness.settle()

    text = written.getvalue()
    assert "search_documents" in text and "turn outcome=answered" in text  # the trace is there either way
    for said in ("Protected in network", "balance billing"):
        assert (said in text) == content, said


@pytest.fixture
def restore_logging() -> object:
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
