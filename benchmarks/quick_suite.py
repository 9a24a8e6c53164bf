"""How long `python3 dev.py test --quick` takes, run after run, wall time (issue 31 item 6: under 2 minutes here).

    flock /tmp/bench.lock .venv/bin/python benchmarks/quick_suite.py            # 3 runs in a row
    flock /tmp/bench.lock .venv/bin/python benchmarks/quick_suite.py --runs 5

Each run is the whole command a developer types: ruff, ruff format --check, mypy (its cache warm after the first
run), then pytest on the fast tests. A run that fails stops the series and prints the end of its output (a flaky
test shows here). The machine is shared: each line gives the 1-minute load average before the run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args(argv)
    took: list[float] = []
    for run in range(1, options.runs + 1):
        load = os.getloadavg()[0]
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "dev.py", "test", "--quick"], cwd=ROOT, capture_output=True, text=True, check=False
        )
        took.append(time.monotonic() - started)
        summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"run {run}: {took[-1]:.1f} s (load {load:.2f} before), exit {done.returncode}: {summary}", flush=True)
        if done.returncode != 0:
            print(done.stdout[-4000:], done.stderr[-4000:], sep="\n", file=sys.stderr)
            return done.returncode
    print(f"dev.py test --quick: {min(took):.1f} to {max(took):.1f} s over {len(took)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
