"""`folio` starts in a blink (issue 21, item 1): importing the command loads none of the heavy clients.

Seen: every `folio` command spent about 2 s of CPU importing openai, slack, aiohttp and azure before doing anything,
`folio --help` included. They load when a command uses them (benchmarks/startup.py measures each command).
"""

from __future__ import annotations

import json
import subprocess
import sys

from bot.cli import COMMANDS, build_parser
from tests.conftest import ROOT

HEAVY = ("openai", "slack_sdk", "slack_bolt", "azure", "aiohttp")


def loaded_after(statement: str) -> list[str]:
    """The heavy packages a fresh interpreter holds after running `statement`."""
    probe = f"import sys\n{statement}\nimport json; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=True)  # fmt: skip
    modules = json.loads(done.stdout.splitlines()[-1])
    return sorted({name.split(".")[0] for name in modules if name.split(".")[0] in HEAVY})


def test_importing_the_command_loads_no_heavy_client() -> None:
    assert loaded_after("import bot.cli") == []


def test_help_loads_none_of_them() -> None:
    assert loaded_after("from bot.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass") == []


def test_the_summaries_help_lists_are_the_commands_own() -> None:
    parsers = {action.dest: action for action in build_parser()._subparsers._group_actions}["command"]
    own = {choice.dest: choice.help for choice in parsers._choices_actions}
    assert own == {name: summary for name, (_, summary) in COMMANDS.items()}
