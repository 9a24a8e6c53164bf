"""Folio under load, from the source checkout: `python benchmarks/bench.py [--threads N] [--workers N] ...`.

Three kinds of process: the fakes (Slack Web API and Responses API, benchmarks/bench_fakes.py), Folio itself
(`folio serve --workers N` in HTTP mode on the local index of the shared corpus, embedded Redis), and this one, which
drives signed events and reads the CPU time and peak memory of Folio's processes from /proc. It needs the checkout
(tests/fakes/ and this folder), so it is not a `folio` command: an installed Folio has neither.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: `python benchmarks/bench.py`
    sys.path.insert(0, str(ROOT))

from benchmarks.figures import ProcessUsage, bench_table, figures  # noqa: E402
from benchmarks.loadgen import LoadResult, Target, drive  # noqa: E402
from bot.evaluation.golden import load_golden  # noqa: E402

FAKES = ROOT / "benchmarks" / "bench_fakes.py"
SECRET = "bench-signing-secret"
CONTAINER = "benefits"
_OURS = ("SLACK_", "OPENAI_", "AZURE_", "FOLIO_", "REDIS_", "PORT", "PROMETHEUS_")
LISTENING = "Folio is listening"  # the line `folio serve` prints once every worker serves

DESCRIPTION = """\
Measure Folio under load: N Slack threads of signed events against `folio serve` in HTTP mode (one process, or
--workers N sharing the port), with the fake Slack and the fake model (rewrite, two searches, answer; each model call
waits --model-latency) in another process, and the local search engine over the shared corpus. Reports ack latency,
turns per second, the overhead ratio (turn wall time / injected model time; 1.0 is the limit), CPU per turn and peak
memory of Folio's processes, errors and duplicate answers, and how soon a person sees each turn's first step and its
answer's first text (streaming on or off); then the aims that apply at that load."""

EPILOG = """\
examples (from the checkout, with the project's virtual environment):
  .venv/bin/python benchmarks/bench.py --threads 30 --replies mention                  # ack p99, CPU per turn
  .venv/bin/python benchmarks/bench.py --threads 100 --replies mention --workers 2      # overhead <= 1.20
  .venv/bin/python benchmarks/bench.py --threads 30 --replies mention --token-delay 20  # first step, first text
  .venv/bin/python benchmarks/bench.py --threads 30 --token-delay 20 --streaming off    # the same, not streamed
latest figures and what limits them: benchmarks/RESULTS.md"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchmarks/bench.py",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--threads", type=int, default=30, metavar="N", help="concurrent Slack threads (default 30)")
    parser.add_argument("--workers", type=int, default=1, metavar="N", help="`folio serve --workers N` (default 1)")
    parser.add_argument("--model-latency", type=float, default=300.0, metavar="MS", help="per model call (default 300)")
    parser.add_argument(
        "--duration", type=float, default=20.0, metavar="S", help="seconds of new questions (default 20)"
    )
    parser.add_argument(
        "--replies",
        choices=("plain", "mention"),
        default="plain",
        help="follow-ups as plain thread replies (default) or as @mentions in the thread",
    )
    parser.add_argument(
        "--streaming",
        choices=("on", "off"),
        default="on",
        help="FOLIO_STREAMING for the Folio measured (default on, as Folio ships)",
    )
    parser.add_argument(
        "--token-delay",
        type=float,
        default=0.0,
        metavar="MS",
        help="per token of the fake model's ~600-character answer (default 0)",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=ROOT.parent / "shared" / "corpus",
        metavar="DIR",
        help="PDFs to index and questions (ground_truth.jsonl) to ask (default: ../shared/corpus)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder (Folio's log, Redis) and say where")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--redis-stats",
        action="store_true",
        help="also print to stderr the embedded Redis's commands per answered turn",
    )
    parser.add_argument(
        "--channel-per-thread",
        action="store_true",
        help="each thread in its own channel (else one: its posts keep Slack's pace of ~1/s, which "
        "caps turns not streamed at about one a second)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the bench and print its table (or JSON); progress goes to stderr. 2 for bad arguments or set-up."""
    args = build_parser().parse_args(argv)
    problem = _problem(args)
    if problem:
        print(f"bench: {problem}", file=sys.stderr)
        return 2
    questions = [q.question for q in load_golden(args.corpus / "ground_truth.jsonl")]
    work = Path(tempfile.mkdtemp(prefix="folio-bench-"))
    try:
        result, usage = _bench(args, work, questions)
    except BenchFailed as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    finally:
        if args.keep:
            print(f"bench: work folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    found = figures(
        result,
        usage,
        threads=args.threads,
        latency_ms=args.model_latency,
        duration=args.duration,
        replies=args.replies,
        streaming=args.streaming == "on",
        token_delay_ms=args.token_delay,
        workers=args.workers,
    )
    print(json.dumps(asdict(found), indent=2) if args.json else bench_table(found))
    return 0


class BenchFailed(Exception):
    """Folio or the fakes would not start: the message says where to look."""


def _problem(args: argparse.Namespace) -> str | None:
    if args.threads < 1 or args.workers < 1 or args.duration <= 0 or args.model_latency < 0 or args.token_delay < 0:
        return "--threads and --workers must be >= 1, --duration > 0, --model-latency and --token-delay >= 0."
    if not (args.corpus / "ground_truth.jsonl").exists() or not any(args.corpus.glob("*.pdf")):
        return f"{args.corpus} holds no PDFs and ground_truth.jsonl: pass --corpus DIR (../shared/corpus)."
    return None


def _say(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def _bench(args: argparse.Namespace, work: Path, questions: list[str]) -> tuple[LoadResult, ProcessUsage]:
    data = work / "data"
    _say(f"indexing {args.corpus} (once; later runs copy the cached index)")
    _build_index(args.corpus, data)
    (work / "channels.yaml").write_text(f"default:\n  container: {CONTAINER}\n")
    with ExitStack() as stack:
        _say(
            f"starting the fakes and Folio ({args.workers} worker{'s' * (args.workers > 1)}, "
            f"streaming {args.streaming})"
        )
        fakes, urls = stack.enter_context(_fakes(args.model_latency, args.token_delay))
        port = _free_port()
        folio = stack.enter_context(
            _folio(work, data, urls, port, streaming=args.streaming == "on", workers=args.workers)
        )
        pids = _folio_processes(folio.pid)
        stats_before = _redis_stats(data) if args.redis_stats else None
        before, fakes_before = _cpu_seconds(pids), _cpu_seconds([fakes.pid])
        target = Target(
            events_url=f"http://127.0.0.1:{port}/slack/events", answers_url=urls["answers_url"], signing_secret=SECRET
        )
        if args.channel_per_thread:
            import benchmarks.loadgen as loadgen
            from benchmarks.peer_run import own_channel_events

            loadgen.question_events = own_channel_events  # drive() looks it up at run time
        _say(f"driving {args.threads} threads for {args.duration:.0f} s")
        started = time.monotonic()
        load = drive(
            target,
            threads=args.threads,
            duration=args.duration,
            questions=questions,
            mention=args.replies == "mention",
            progress=_progress(started, args.duration),
        )
        result = asyncio.run(load)
        after, fakes_after = _cpu_seconds(pids), _cpu_seconds([fakes.pid])
        if stats_before is not None:
            _say_redis_stats(stats_before, _redis_stats(data), sum(1 for turn in result.turns if turn.error is None))
        usage = ProcessUsage(
            cpu_seconds=None if before is None or after is None else after - before,
            peak_rss_mb=_peak_rss_mb(pids),
            fakes_cpu_seconds=None if fakes_before is None or fakes_after is None else fakes_after - fakes_before,
        )
        _say("load done; stopping Folio and the fakes")
    return result, usage


def _redis_stats(data: Path) -> dict[str, int]:
    """INFO commandstats of the embedded Redis Folio runs in `data`: calls by command."""
    import redis

    from bot.app.redis_server import running_socket

    socket = running_socket(data)
    if socket is None:
        raise BenchFailed(f"no embedded Redis runs in {data}")
    client = redis.Redis(unix_socket_path=str(socket))
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def _say_redis_stats(before: dict[str, int], after: dict[str, int], turns: int) -> None:
    """Per answered turn: every command Redis ran (scripts' own commands included), and the commands a client sent
    (a pipeline's or transaction's commands together count as one round trip only in the client: see RESULTS.md)."""
    counts = {name: after[name] - before.get(name, 0) for name in after if after[name] > before.get(name, 0)}
    counts.pop("info", None)
    per_turn = {name: round(count / max(turns, 1), 2) for name, count in sorted(counts.items(), key=lambda x: -x[1])}
    _say(
        f"redis over {turns} answered turns, per turn: {sum(counts.values()) / max(turns, 1):.1f} commands; "
        f"{json.dumps(per_turn)}"
    )


def _progress(started: float, duration: float):  # type: ignore[no-untyped-def]
    def report(result: LoadResult) -> None:
        elapsed = time.monotonic() - started
        answered = sum(1 for turn in result.turns if turn.error is None)
        failed = len(result.turns) - answered + len(result.ack_failures)
        phase = f"{elapsed:.0f}/{duration:.0f} s" if elapsed < duration else "waiting for the last answers"
        _say(f"{phase}: {answered} turns answered, {failed} errors")

    return report


def _build_index(corpus: Path, data: Path) -> None:
    """Index the corpus once into a cache beside the temp folder (unchanged files are skipped), then copy it. One cache
    per corpus folder and checkout: the same files from another folder would clash by name, and checkouts that chunk
    differently (an A/B against an export of an older commit) re-indexed every file of a shared cache at each run,
    leaving stale FTS5 data that made a search cost ~1.6x (benchmarks/RESULTS.md, "Search CPU under the harness")."""
    from bot.ingest import IndexOptions, index_files
    from bot.retrieval.local import LocalRetriever

    folder = hashlib.sha256(f"{corpus.resolve()}\n{ROOT}".encode()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / "folio-bench-index" / folder / "index.sqlite"

    async def build() -> None:
        retriever = LocalRetriever(cache)
        try:
            report = await index_files(sorted(corpus.glob("*.pdf")), retriever, IndexOptions(container=CONTAINER))
        finally:
            await retriever.close()
        if report.failed:
            raise BenchFailed(f"the bench corpus could not be indexed: {report.failed[0]}")

    asyncio.run(build())
    data.mkdir(parents=True, exist_ok=True)
    shutil.copy(cache, data / "index.sqlite")


def _pythonpath() -> str:
    return os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


@contextmanager
def _fakes(latency_ms: float, token_delay_ms: float) -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    command = [
        sys.executable,
        str(FAKES),
        "--model-latency-ms",
        str(latency_ms),
        "--token-delay-ms",
        str(token_delay_ms),
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        if not line:
            raise BenchFailed(f"the bench fakes did not start ({FAKES}); run it by hand to see why.")
        yield process, json.loads(line)
    finally:
        if process.stdin:
            process.stdin.close()
        _stop(process)


def serve_command(work: Path, port: int, workers: int) -> list[str]:
    """`folio serve` on 127.0.0.1:`port` with `workers`, reading no .env (the environment given is the whole
    configuration): the command every benchmark that starts Folio runs."""
    serve = ("serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers))
    return [sys.executable, "-m", "bot", "--env-file", str(work / "none.env"), *serve]


@contextmanager
def _folio(
    work: Path, data: Path, urls: dict[str, str], port: int, *, streaming: bool, workers: int
) -> Iterator[subprocess.Popen[bytes]]:
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
            "FOLIO_DATA_DIR": str(data),
            "FOLIO_CHANNELS_FILE": str(work / "channels.yaml"),
            "FOLIO_LOG_LEVEL": "WARNING",
            "FOLIO_STREAMING": "true" if streaming else "false",
            "PYTHONPATH": _pythonpath(),
        }
    )
    log_path = work / "folio.log"
    log = log_path.open("wb")
    command = serve_command(work, port, workers)
    process = subprocess.Popen(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_listening(process, log_path)
        yield process
    finally:
        _stop(process, timeout=40)
        log.close()


def _wait_listening(process: subprocess.Popen[bytes], log: Path, timeout: float = 90.0) -> None:
    """Until Folio says it listens (with --workers, once every worker does)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if LISTENING in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            raise BenchFailed(f"Folio stopped at start-up:\n{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)
    raise BenchFailed(f"Folio did not start listening within {timeout:.0f} s; see {log} (--keep keeps it).")


def _stop(process: subprocess.Popen, *, timeout: float = 10) -> None:  # type: ignore[type-arg]
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _folio_processes(pid: int) -> list[int]:
    """Folio's Python processes: the one started and its workers (not the embedded redis-server), from /proc."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        try:
            if Path(f"/proc/{current}/comm").read_text().strip().startswith("redis"):
                continue
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        found.append(current)
        pending.extend(int(child) for child in children)
    return found


def _cpu_seconds(pids: list[int]) -> float | None:
    """User + system CPU time of these processes together, from /proc (Linux); None elsewhere."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total if pids else None


def _peak_rss_mb(pids: list[int]) -> float | None:
    """The largest peak resident memory (VmHWM) among these processes, from /proc (Linux); None elsewhere."""
    peaks = []
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        except OSError:
            return None
    return max(peaks, default=None)


if __name__ == "__main__":
    sys.exit(main())
