"""Ctrl-C ends every command at once, with no traceback and exit status 130; a closed pipe ends one quietly."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dev  # dev.py, at the top of the checkout (pythonpath: .)
from tests.cli.terminal import ROOT, Terminal, clean_env, until_asked
from tests.fakes.openai_responses import FakeResponses, reply, search, tools

pytestmark = pytest.mark.slow  # starts processes: `python3 dev.py test --quick` skips it


def test_ctrl_c_ends_folio_ask_during_its_answer(tmp_path: Path) -> None:
    with FakeResponses() as fake:
        fake.script(tools(search("refund window"), latency=20.0), reply("Never shown [S1]."))
        env = clean_env(tmp_path / "data", OPENAI_API_KEY="sk-fake", OPENAI_BASE_URL=fake.base_url)
        term = Terminal.folio("ask", "what is the refund window?", env=env, cwd=tmp_path)
        until_asked(fake)
        started = time.monotonic()
        term.interrupt()
        assert term.wait(timeout=10) == 130
        assert time.monotonic() - started < 5  # at once, not when the model answers (20 s)
        fake.leave_unused()  # the answer was cancelled before the model was asked for it
    assert "Traceback" not in term.screen and "Never shown" not in term.screen


def test_ctrl_c_ends_the_terminal_chat_of_folio_serve(tmp_path: Path) -> None:
    term = Terminal.folio("serve", env=clean_env(tmp_path / "data"), cwd=tmp_path)
    term.expect(r"Slack is not configured.*\n(.|\n)*> $")
    term.interrupt()
    assert term.wait(timeout=10) == 130
    assert "Traceback" not in term.screen


def test_ctrl_c_ends_dev_py_run_without_a_traceback(tmp_path: Path) -> None:
    stamp = ROOT / ".venv" / ".folio-installed"
    if not stamp.exists() or not stamp.read_text().startswith(dev.wanted_stamp()):
        pytest.skip("the .venv was not installed by dev.py for this pyproject.toml (dev.py run would install it)")
    if (ROOT / ".env").exists():
        pytest.skip("dev.py runs Folio in the checkout, whose .env could connect it to Slack or a model")
    python = os.environ.get("FOLIO_SYSTEM_PYTHON", sys.executable)  # dev.py runs on any python3 >= 3.11
    term = Terminal([python, str(ROOT / "dev.py"), "run"], env=clean_env(tmp_path / "data"), cwd=tmp_path)
    term.expect(r"> $")
    term.interrupt()
    assert term.wait(timeout=10) == 130
    assert "Traceback" not in term.screen and "KeyboardInterrupt" not in term.screen


def test_a_closed_pipe_ends_folio_search_quietly(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir(mode=0o700)  # not new: Folio would say that it created it
    reader, writer = os.pipe()
    os.close(reader)  # `folio search ... | head` once head has gone
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bot", "search", "payment terms"],
            stdout=writer,
            stderr=subprocess.PIPE,
            env=clean_env(tmp_path / "data"),
            cwd=tmp_path,
            text=True,
            timeout=60,
        )
    finally:
        os.close(writer)
    assert done.stderr == ""
    assert done.returncode == 141  # 128 + SIGPIPE, as a shell reports `yes | head`
