"""How long a redeploy leaves Slack without Folio: `python benchmarks/restart.py [--restarts N] [--workers N]`.

Single process (the default): `folio serve` in HTTP mode with the bench's fake Slack and fake model
(benchmarks/bench_fakes.py) and the embedded Redis (or --redis-url), restarted as an orchestrator does: SIGTERM, wait
for the exit, start again. Measured per restart, from the SIGTERM: when the old process exited, when the new one
answered /readyz 200, how many /readyz probes (one every 20 ms, each on a new connection) failed, and what Slack saw:
a signed @mention every 100 ms all along, each acked (HTTP 200 within 3 s), late (acked after more than 3 s: Slack
counts it failed and retries) or refused (nothing listened: connection refused or reset), and the longest time the
port refused connections. With --workers N: SIGHUP (a reload) instead, or SIGTERM and a new start with --redeploy
(as compose does). --kill-worker: SIGKILL one worker of --workers N (the parent replaces it). Figures to
benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: `python benchmarks/restart.py`
    sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from benchmarks.bench import SECRET, _build_index, _fakes, _free_port, _pythonpath, serve_command  # noqa: E402
from benchmarks.loadgen import event_body, question_events, signed_headers  # noqa: E402

_OURS = ("SLACK_", "OPENAI_", "AZURE_", "FOLIO_", "REDIS_", "PORT", "PROMETHEUS_")
PROBE_EVERY = 0.02
DELIVER_EVERY = 0.1  # a signed @mention this often while a restart is measured
ACK_TIMEOUT = 3.0  # Slack counts a delivery not acked within 3 s as failed


def folio_env(work: Path, urls: dict[str, str], *, redis_url: str | None) -> dict[str, str]:
    """`folio serve`'s environment for a bench: the fakes, the bench index, no settings of the caller's."""
    env = {name: value for name, value in os.environ.items() if not name.upper().startswith(_OURS)}
    env.update(
        {
            "SLACK_BOT_TOKEN": urls["slack_token"],
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": urls["slack_api_url"],
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": urls["model_base_url"],
            "FOLIO_MODEL_FAST": "bench-model",
            "FOLIO_CODE_INTERPRETER": "false",
            "FOLIO_DATA_DIR": str(work / "data"),
            "FOLIO_CHANNELS_FILE": str(work / "channels.yaml"),
            "FOLIO_LOG_LEVEL": "INFO",
            "PYTHONPATH": _pythonpath(),
        }
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def start(work: Path, env: dict[str, str], port: int, workers: int, log: Path) -> subprocess.Popen[bytes]:
    command = serve_command(work, port, workers)
    with log.open("ab") as out:
        return subprocess.Popen(command, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


class Probes:
    """/readyz every PROBE_EVERY s on a new connection, in a thread: how many failed and when it last answered 200."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.failed = 0
        self.last_ok = 0.0
        self.closed = 0.0  # the longest time a connection to the port was refused
        self._refused_since: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._threads = [self._thread, threading.Thread(target=self._connects, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            if ready(self.port):
                self.last_ok = time.monotonic()
            else:
                self.failed += 1
            time.sleep(PROBE_EVERY)

    def _connects(self) -> None:
        """A bare TCP connect every 10 ms: how long the port refused connections (not whether Folio answered)."""
        while not self._stop.is_set():
            with socket.socket() as probe:
                refused = probe.connect_ex(("127.0.0.1", self.port)) != 0
            now = time.monotonic()
            if refused and self._refused_since is None:
                self._refused_since = now
            elif not refused and self._refused_since is not None:
                self.closed = max(self.closed, now - self._refused_since)
                self._refused_since = None
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()


class Deliveries:
    """A signed @mention every DELIVER_EVERY s, in a thread with its own event loop, until stopped: what Slack saw."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/slack/events"
        self.outcomes: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()

    async def _run(self) -> None:
        stamps = itertools.count(1)
        base = int(time.time())
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
            sent = []
            while not self._stop.is_set():
                ts = f"{base}.{next(stamps):06d}"
                [event] = [
                    e
                    for e in question_events("What is the refund window?", ts=ts, thread_ts=None, user="URESTART01")
                    if e["type"] == "app_mention"
                ]
                sent.append(asyncio.create_task(self._post(session, event, f"Ev{ts.replace('.', '')}")))
                await asyncio.sleep(DELIVER_EVERY)
            await asyncio.gather(*sent)

    async def _post(self, session: aiohttp.ClientSession, event: dict[str, object], event_id: str) -> None:
        body = event_body(event, event_id=event_id)
        began = time.monotonic()
        try:
            async with session.post(
                self.url, data=body, headers=signed_headers(SECRET, body), timeout=aiohttp.ClientTimeout(total=30)
            ) as response:
                await response.read()
                took = time.monotonic() - began
                outcome = "late" if took > ACK_TIMEOUT else "acked" if response.status == 200 else "refused"
        except (aiohttp.ClientError, TimeoutError):
            outcome = "refused"
        self.outcomes.append(outcome)

    def stop(self) -> dict[str, int]:
        self._stop.set()
        self._thread.join()
        return {name: self.outcomes.count(name) for name in ("acked", "late", "refused")}


def wait_ready(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 120.0) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready(port):
            return time.monotonic()
        if process.poll() is not None:
            raise SystemExit(f"restart: Folio stopped at start-up:\n{log.read_text(errors='replace')[-2000:]}")
        time.sleep(PROBE_EVERY)
    raise SystemExit(f"restart: Folio was not ready within {timeout:.0f} s; see {log}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/restart.py", description=__doc__.splitlines()[0])
    parser.add_argument("--restarts", type=int, default=3, metavar="N", help="restarts (or reloads) measured")
    parser.add_argument("--workers", type=int, default=1, metavar="N", help="N > 1: SIGHUP reloads of --workers N")
    parser.add_argument("--redeploy", action="store_true", help="with --workers N: SIGTERM and start again instead")
    parser.add_argument("--kill-worker", action="store_true", help="with --workers N: SIGKILL one worker instead")
    parser.add_argument("--redis-url", help="a Redis of yours (default: the embedded one)")
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus", metavar="DIR")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="folio-restart-"))
    log = work / "folio.log"
    try:
        _build_index(args.corpus, work / "data")
        (work / "channels.yaml").write_text("default:\n  container: benefits\n")
        with _fakes(300.0, 0.0) as (_, urls):
            env = folio_env(work, urls, redis_url=args.redis_url)
            port = _free_port()
            began = time.monotonic()
            process = start(work, env, port, args.workers, log)
            first = wait_ready(port, process, log) - began
            print(f"restart: first start, to /readyz 200: {first:.2f} s", file=sys.stderr)
            rows = []
            for _ in range(args.restarts):
                probes, deliveries = Probes(port), Deliveries(port)
                time.sleep(0.5)
                if args.kill_worker:
                    process, row = _kill_worker(process, log)
                elif args.workers > 1 and not args.redeploy:
                    process, row = _reload(process, port, log)
                else:
                    process, row = _restart(work, env, port, process, log, args.workers)
                time.sleep(1.0)
                seen = deliveries.stop()
                probes.stop()
                rows.append(
                    {
                        **row,
                        "port_closed_s": probes.closed,
                        "probes_failed": probes.failed,
                        **{f"deliveries_{name}": count for name, count in seen.items()},
                    }
                )
                print(f"restart: {rows[-1]}", file=sys.stderr)
            process.send_signal(signal.SIGTERM)
            process.wait(60)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _report(rows, first)
    return 0


def _restart(
    work: Path, env: dict[str, str], port: int, process: subprocess.Popen[bytes], log: Path, workers: int
) -> tuple[subprocess.Popen[bytes], dict[str, float]]:
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    process.wait(60)
    exited = time.monotonic()
    new = start(work, env, port, workers, log)
    answered = wait_ready(port, new, log)
    return new, {"exit_s": exited - began, "start_s": answered - exited, "gap_s": answered - began}


def _reload(process: subprocess.Popen[bytes], port: int, log: Path) -> tuple[subprocess.Popen[bytes], dict[str, float]]:
    seen = log.read_text(errors="replace").count("reloaded: processes")
    began = time.monotonic()
    process.send_signal(signal.SIGHUP)
    while log.read_text(errors="replace").count("reloaded: processes") == seen:
        time.sleep(PROBE_EVERY)
    return process, {"reload_s": time.monotonic() - began, "gap_s": 0.0}


def _kill_worker(process: subprocess.Popen[bytes], log: Path) -> tuple[subprocess.Popen[bytes], dict[str, float]]:
    seen = log.read_text(errors="replace").count("serves in place of")
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
    workers = [int(pid) for pid in children if "python" in Path(f"/proc/{pid}/comm").read_text(errors="ignore")]
    began = time.monotonic()
    os.kill(workers[0], signal.SIGKILL)
    while log.read_text(errors="replace").count("serves in place of") == seen:
        time.sleep(PROBE_EVERY)
    return process, {"replaced_s": time.monotonic() - began}


def _report(rows: list[dict[str, float]], first: float) -> None:
    print("load average (1/5/15 min) at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"first start to /readyz 200: {first:.2f} s")
    for name in rows[0]:
        values = [row[name] for row in rows]
        print(f"{name}: median {statistics.median(values):.2f}, max {max(values):.2f} ({len(values)} runs)")


if __name__ == "__main__":
    sys.exit(main())
