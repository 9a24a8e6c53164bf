"""The bench end to end at a tiny load: three processes start, signed events are answered once each, all stop.

About 15 s, so it is not in the default run: `.venv/bin/python -m pytest -m bench`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bench import main

pytestmark = pytest.mark.bench


@pytest.mark.parametrize("workers", [1, 2])
def test_a_short_bench_answers_every_turn_once(
    workers: int, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "--threads",
        "3",
        "--duration",
        "2",
        "--model-latency",
        "20",
        "--replies",
        "mention",
        "--json",
        "--workers",
        str(workers),
        "--corpus",
        str(shared_dir / "corpus"),
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    found = json.loads(captured.out)
    assert found["turns"] >= 3 and found["workers"] == workers
    assert found["errors"] == 0 and found["duplicate_answers"] == 0
    assert found["events"] >= 2 * found["turns"]  # every question was an @mention: app_mention + message
    assert found["peak_rss_mb"] and found["cpu_s_per_turn"]
    assert "turns answered" in captured.err  # progress while it runs
