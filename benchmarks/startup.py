"""How long each `folio` command takes from a fresh process to its exit (issue 21, "start in a blink").

    .venv/bin/python benchmarks/startup.py              # 5 runs of each command, median and best wall / CPU
    .venv/bin/python benchmarks/startup.py --runs 9

Every run is a new `python -m bot ...` process in a scratch folder with embedded defaults (no model, no Slack), whose
local index already holds the sample corpus (one warm-up run builds it), so what is measured is start-up: imports,
settings, opening the index, and the command's own work. Aims on an idle machine: `--help` <= 0.3 s, `search` and
`list` <= 0.8 s, `ask` without a model <= 1 s. The machine is shared: note `uptime` beside the figures.

    .venv/bin/python benchmarks/startup.py --serve      # where a `folio serve` start goes, part by part (issue 32)

`--serve`: each run a fresh process that does what `folio serve` does, timing each part: the interpreter, the imports
before the port opens (bot.cli.serve_command), reading the settings and opening the port, the rest of the imports
(bot.cli.serve: Bolt, the agent, the clients), the embedded Redis, the local index (and the sample corpus check), the
channel policy, the whole `open_folio`, the Bolt app, and Slack's auth.test (the bench's fake Slack). A worker of
`--workers N` is a new interpreter (spawned, not forked): its start is the interpreter plus the imports.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config import Settings

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: `python benchmarks/startup.py`
    sys.path.insert(0, str(ROOT))
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


def serve_parts() -> None:
    """In a fresh process (`--serve`): time each part of a `folio serve` start, print them as JSON seconds."""
    parts: dict[str, float] = {}
    began = time.perf_counter()

    def mark(name: str) -> None:
        nonlocal began
        now = time.perf_counter()
        parts[name] = now - began
        began = now

    import bot.cli.serve_command  # noqa: F401 - what runs before the port opens

    mark("imports before the port opens")
    from bot.config import load_settings
    from bot.ports import Listeners

    settings = load_settings(".env")
    listeners = Listeners.open(settings, host="127.0.0.1", port=0)
    mark("settings, port open")
    import bot.cli.serve  # noqa: F401 - the rest of `folio serve`

    mark("the other imports (Bolt, agent, clients)")
    asyncio.run(_serve_parts_async(settings, mark))
    listeners.close()
    print(json.dumps(parts))


async def _serve_parts_async(settings: Settings, mark: Callable[[str], None]) -> None:
    from bot.app import builders, open_folio
    from bot.app.sample import ensure_sample_index
    from bot.config.policy_file import PolicyFile
    from bot.slack.app import build_app
    from bot.slack.services import SlackFolio

    redis = await builders.embedded_redis(settings)
    mark("embedded Redis (start)")
    await redis.stop()
    mark("(embedded Redis stop)")
    links = builders.links(settings, file_links=False)
    index = builders.retriever(settings, embedder=None, credential=None)
    await ensure_sample_index(index, links.documents)
    await index.close()
    mark("index open, sample corpus checked")
    PolicyFile(settings.folio_channels_file).current()
    mark("channel policy read")
    async with open_folio(settings, serving=True) as folio:
        mark("open_folio (Redis, index, policy, clients)")
        app = build_app(SlackFolio.of(folio))
        mark("Bolt app")
        await app.client.auth_test()
        mark("Slack auth.test")
    mark("(closing)")


def serve_main(runs: int) -> int:
    """`--serve`: the parts of a `folio serve` start, median of `runs` fresh processes, with the bench's fake Slack."""
    from benchmarks.bench import SECRET, _fakes

    with tempfile.TemporaryDirectory() as scratch, _fakes(300.0, 0.0) as (_, urls):
        folder = Path(scratch)
        (folder / "channels.yaml").write_text("default:\n  container: sample\n")
        env = {
            name: value for name, value in os.environ.items() if not name.startswith(("FOLIO_", "SLACK_", "OPENAI_"))
        }
        env.update(
            PYTHONPATH=str(ROOT),
            FOLIO_DATA_DIR=str(folder / "data"),
            AZURE_OPENAI_ENDPOINT="",
            REDIS_URL="",
            SLACK_BOT_TOKEN=urls["slack_token"],
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_API_URL=urls["slack_api_url"],
            FOLIO_CHANNELS_FILE=str(folder / "channels.yaml"),
        )
        child = [sys.executable, "-c", "from benchmarks.startup import serve_parts; serve_parts()"]
        subprocess.run(child, cwd=folder, env=env, capture_output=True, check=True)  # warm-up: the sample index
        interpreter, rows = [], []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            interpreter.append(time.perf_counter() - started)
            done = subprocess.run(child, cwd=folder, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"startup: the serve parts failed: {done.stderr[-2000:]}")
            rows.append(json.loads(done.stdout.splitlines()[-1]))
    print("| part of a `folio serve` start | median | max |")
    print("| --- | --- | --- |")
    print(f"| the interpreter (`python -c pass`) | {statistics.median(interpreter):.3f} s | {max(interpreter):.3f} s |")
    for name in rows[0]:
        values = [row[name] for row in rows]
        print(f"| {name} | {statistics.median(values):.3f} s | {max(values):.3f} s |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--serve", action="store_true", help="the parts of a `folio serve` start instead")
    args = parser.parse_args()
    if args.serve:
        print(f"uptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min load)")
        code = serve_main(args.runs)
        print(f"uptime after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        return code
    print(f"uptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min load)")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        timed(["list"], folder)  # warm-up: builds the sample index and the data folder once
        print("| command | wall median | wall best | CPU median | aim |")
        print("| --- | --- | --- | --- | --- |")
        for name, (command, aim) in COMMANDS.items():
            runs = [timed(command, folder) for _ in range(args.runs)]
            walls, cpus = [wall for wall, _ in runs], [cpu for _, cpu in runs]
            print(
                f"| `{name}` | {statistics.median(walls):.2f} s | {min(walls):.2f} s | "
                f"{statistics.median(cpus):.2f} s | <= {aim} s |",
                flush=True,
            )
    print(f"uptime after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
