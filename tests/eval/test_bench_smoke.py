"""`folio bench` end to end at a tiny load: three processes start, signed events are answered once each, all stop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main


def test_a_short_bench_answers_every_turn_once(shared_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "--threads", "3", "--duration", "2", "--model-latency", "20", "--replies", "mention", "--json"]
    assert main(argv) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["turns"] >= 3
    assert found["errors"] == 0 and found["duplicate_answers"] == 0
    assert found["events"] >= 2 * found["turns"]  # every question was an @mention: app_mention + message
    assert found["peak_rss_mb"] and found["cpu_s_per_turn"]
