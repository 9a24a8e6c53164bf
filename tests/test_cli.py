"""The `folio` command explains itself: every subcommand is listed, and each shows how it is used."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from bot.cli import COMMANDS, build_parser, main
from tests.conftest import ROOT

SUBCOMMANDS = (
    "index",
    "list",
    "remove",
    "sync",
    "sources",
    "watch",
    "search",
    "ask",
    "chat",
    "serve",
    "access",
    "doctor",
    "eval",
    "feedback",
    "usage",
    "trace",
    "mcp",
)


def test_every_subcommand_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    shown = capsys.readouterr().out
    assert exited.value.code == 0
    assert len(COMMANDS) == len(SUBCOMMANDS)
    for name in SUBCOMMANDS:
        assert f"    {name} " in shown or f"    {name}\n" in shown, name


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_each_subcommand_shows_an_example(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([name, "--help"])
    shown = capsys.readouterr().out
    assert f"usage: folio {name}" in shown
    examples = [line for line in shown.splitlines() if line.startswith(f"  folio {name} ")]
    assert examples, f"`folio {name} --help` shows no example"


def test_a_missing_subcommand_is_an_error_not_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2
    assert "COMMAND" in capsys.readouterr().err


@pytest.mark.slow  # starts a process
def test_python_dash_m_bot_is_the_folio_command() -> None:
    done = subprocess.run([sys.executable, "-m", "bot", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "usage: folio" in done.stdout


def test_a_bad_setting_is_one_line_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FOLIO_SEARCH_TOP", "many")
    assert main(["search", "refund window"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("folio: Invalid setting: FOLIO_SEARCH_TOP")
    assert "Traceback" not in err and err.count("\n") == 1


def test_the_documented_command_list_names_only_commands_and_options_that_exist() -> None:
    readme = (ROOT / "docs" / "terminal.md").read_text(encoding="utf-8")
    block = readme.split("## The `folio` command", 1)[1].split("```")[1]  # seen: `folio bench`, which is not one
    parsers = {action.dest: action for action in build_parser()._subparsers._group_actions}["command"].choices
    for line in [line for line in block.splitlines() if line.startswith("folio ")]:
        name = line.split()[1]
        assert name in parsers, f"docs/terminal.md lists `folio {name}`, which `folio` does not have"
        known = {option for action in parsers[name]._actions for option in action.option_strings}
        assert set(re.findall(r"--[a-z-]+", line)) <= known, line
