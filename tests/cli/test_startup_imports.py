"""`folio` starts in a blink (issue 21, item 1): importing the command loads none of the heavy clients.

Seen: every `folio` command spent about 2 s of CPU importing openai, slack, aiohttp and azure before doing anything,
`folio --help` included. They load when a command uses them (benchmarks/startup.py measures each command).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import COMMANDS, build_parser
from tests.conftest import ROOT

HEAVY = ("openai", "slack_sdk", "slack_bolt", "azure", "aiohttp")


def loaded_after(statement: str, *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> list[str]:
    """The heavy packages a fresh interpreter holds after running `statement`."""
    probe = f"import sys\n{statement}\nimport json; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    modules = json.loads(done.stdout.splitlines()[-1])
    return sorted({name.split(".")[0] for name in modules if name.split(".")[0] in HEAVY})


@pytest.mark.slow  # starts a process
def test_importing_the_command_loads_no_heavy_client() -> None:
    assert loaded_after("import bot.cli") == []


@pytest.mark.slow  # starts a process
def test_help_loads_none_of_them() -> None:
    assert loaded_after("from bot.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass") == []


def test_the_summaries_help_lists_are_the_commands_own() -> None:
    parsers = {action.dest: action for action in build_parser()._subparsers._group_actions}["command"]
    own = {choice.dest: choice.help for choice in parsers._choices_actions}
    assert own == {name: summary for name, (_, summary) in COMMANDS.items()}


@pytest.mark.parametrize("command", [["search", "refund window"], ["list"], ["ask", "What is the refund window?"]])
@pytest.mark.slow  # starts a process
def test_search_list_and_ask_without_a_model_load_none_of_them(tmp_path: Path, command: list[str]) -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith(("FOLIO_", "SLACK_", "OPENAI_"))}
    env.update(PYTHONPATH=str(ROOT), FOLIO_DATA_DIR=str(tmp_path / "data"), AZURE_OPENAI_ENDPOINT="", REDIS_URL="")
    run = f"from bot.cli import main\nassert main({command!r}) == 0"

    assert loaded_after(run, cwd=tmp_path, env=env) == []
