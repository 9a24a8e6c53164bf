"""How long each `folio` command takes from a fresh process to its exit (issue 21, "start in a blink").

    .venv/bin/python benchmarks/startup.py              # 5 runs of each command, median and best wall / CPU
    .venv/bin/python benchmarks/startup.py --runs 9

Every run is a new `python -m bot ...` process in a scratch folder with embedded defaults (no model, no Slack), whose
local index already holds the sample corpus (one warm-up run builds it), so what is measured is start-up: imports,
settings, opening the index, and the command's own work. Aims on an idle machine: `--help` <= 0.3 s, `search` and
`list` <= 0.8 s, `ask` without a model <= 1 s. The machine is shared: note `uptime` beside the figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "folio --help": (["--help"], 0.3),
    "folio search": (["search", "hearing aids"], 0.8),
    "folio list": (["list"], 0.8),
    "folio ask (no model)": (["ask", "What is the refund window?"], 1.0),
}


def timed(args: list[str], folder: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child) of one `python -m bot ARGS` in `folder`."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("FOLIO_", "SLACK_", "OPENAI_"))}
    env.update(PYTHONPATH=str(ROOT), FOLIO_DATA_DIR=str(folder / "data"), AZURE_OPENAI_ENDPOINT="", REDIS_URL="")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "bot", *args], cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"folio {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"uptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min load)")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        timed(["list"], folder)  # warm-up: builds the sample index and the data folder once
        print("| command | wall median | wall best | CPU median | aim |")
        print("| --- | --- | --- | --- | --- |")
        for name, (command, aim) in COMMANDS.items():
            runs = [timed(command, folder) for _ in range(args.runs)]
            walls, cpus = [wall for wall, _ in runs], [cpu for _, cpu in runs]
            print(f"| `{name}` | {statistics.median(walls):.2f} s | {min(walls):.2f} s | "
                  f"{statistics.median(cpus):.2f} s | <= {aim} s |", flush=True)  # fmt: skip
    print(f"uptime after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
