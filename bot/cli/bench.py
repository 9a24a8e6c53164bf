"""`folio bench [--threads N] [--model-latency MS] [--duration S] [--json]`: Folio under load, from a checkout.

Three processes: the fakes (Slack Web API and Responses API, benchmarks/bench_fakes.py), Folio itself
(`folio serve` in HTTP mode on the local index of the shared corpus, embedded Redis), and this one, which drives
signed events and reads Folio's CPU time and peak memory from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import bot
from bot.cli.common import HelpFormatter
from bot.errors import ConfigurationError, InvalidInput
from bot.evaluation.golden import load_golden
from bot.evaluation.load import ProcessUsage, bench_table, figures
from bot.evaluation.loadgen import LoadResult, Target, drive

ROOT = Path(bot.__file__).resolve().parent.parent
FAKES = ROOT / "benchmarks" / "bench_fakes.py"
SECRET = "bench-signing-secret"
CONTAINER = "benefits"
_OURS = ("SLACK_", "OPENAI_", "AZURE_", "FOLIO_", "REDIS_", "PORT")

DESCRIPTION = """\
Measure one Folio process under load: N Slack threads of signed events against Folio in HTTP mode, with the fake
Slack and the fake model (rewrite, two searches, answer; each model call waits --model-latency) in another process,
and the local search engine over the shared corpus. Reports ack latency, turns per second, the overhead ratio
(turn wall time / injected model time; 1.0 is the limit), CPU per turn, peak memory, errors and duplicate answers,
and how soon a person sees each turn's first step and its answer's first text (streaming on or off).
Needs the source checkout (tests/fakes/, benchmarks/) and ../shared/corpus beside it."""

EPILOG = """\
aims (2 cores, one process):
  folio bench --threads 30 --replies mention   # ~50 events/s (an @mention is 2 events): ack p99 < 100 ms
  folio bench --threads 200                    # 300 ms a model call: overhead ratio <= 1.10, no errors, < 300 MB
  folio bench --threads 30 --token-delay 20    # first step p99 < 1 s; first text <= 300 ms after the model's
                                               # first token; >= 250 answer characters per text append
  folio bench --threads 30 --token-delay 20 --streaming off   # the same turns without streams, to compare
latest figures and what limits them: benchmarks/RESULTS.md"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench", help="measure Folio under load (needs the source checkout)", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=HelpFormatter,
    )  # fmt: skip
    parser.add_argument("--threads", type=int, default=200, metavar="N", help="concurrent Slack threads (default 200)")
    parser.add_argument("--model-latency", type=float, default=300.0, metavar="MS", help="per model call (default 300)")
    parser.add_argument(
        "--duration", type=float, default=20.0, metavar="S", help="seconds of new questions (default 20)"
    )
    parser.add_argument("--replies", choices=("plain", "mention"), default="plain",
                        help="follow-ups as plain thread replies (default) or as @mentions in the thread")
    parser.add_argument("--streaming", choices=("on", "off"), default="on",
                        help="FOLIO_STREAMING for the Folio measured (default on, as Folio ships)")
    parser.add_argument("--token-delay", type=float, default=0.0, metavar="MS",
                        help="per token of the fake model's ~600-character answer (default 0)")
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus", metavar="DIR",
                        help="PDFs to index and questions (ground_truth.jsonl) to ask (default: ../shared/corpus)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (Folio's log, Redis) and say where")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the bench and print its table (or JSON)."""
    _check_checkout(args.corpus)
    if args.threads < 1 or args.duration <= 0 or args.model_latency < 0 or args.token_delay < 0:
        raise InvalidInput("--threads must be >= 1, --duration > 0, --model-latency and --token-delay >= 0.")
    questions = [q.question for q in load_golden(args.corpus / "ground_truth.jsonl")]
    work = Path(tempfile.mkdtemp(prefix="folio-bench-"))
    try:
        result, usage = _bench(args, work, questions)
    finally:
        if args.keep:
            print(f"work folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    found = figures(
        result, usage, threads=args.threads, latency_ms=args.model_latency, duration=args.duration,
        replies=args.replies, streaming=args.streaming == "on", token_delay_ms=args.token_delay,
    )  # fmt: skip
    print(json.dumps(asdict(found), indent=2) if args.json else bench_table(found))
    return 0


def _check_checkout(corpus: Path) -> None:
    if not FAKES.exists() or not (ROOT / "tests" / "fakes" / "slack_api.py").exists():
        raise ConfigurationError(
            f"folio bench needs the source checkout: it runs the fakes in tests/fakes/ and benchmarks/, which are not "
            f"beside this installation ({ROOT}). Run it from a git clone: `python -m bot bench` in the checkout."
        )
    if not (corpus / "ground_truth.jsonl").exists() or not any(corpus.glob("*.pdf")):
        raise ConfigurationError(
            f"{corpus} holds no PDFs and ground_truth.jsonl: pass --corpus DIR (../shared/corpus)."
        )


def _bench(args: argparse.Namespace, work: Path, questions: list[str]) -> tuple[LoadResult, ProcessUsage]:
    data = work / "data"
    _build_index(args.corpus, data)
    (work / "channels.yaml").write_text(f"default:\n  container: {CONTAINER}\n")
    with ExitStack() as stack:
        fakes, urls = stack.enter_context(_fakes(args.model_latency, args.token_delay))
        port = _free_port()
        folio = stack.enter_context(_folio(work, data, urls, port, streaming=args.streaming == "on"))
        before, fakes_before = _cpu_seconds(folio.pid), _cpu_seconds(fakes.pid)
        target = Target(events_url=f"http://127.0.0.1:{port}/slack/events", answers_url=urls["answers_url"],
                        signing_secret=SECRET)  # fmt: skip
        load = drive(target, threads=args.threads, duration=args.duration, questions=questions,
                     mention=args.replies == "mention")  # fmt: skip
        result = asyncio.run(load)
        after, fakes_after = _cpu_seconds(folio.pid), _cpu_seconds(fakes.pid)
        usage = ProcessUsage(
            cpu_seconds=None if before is None or after is None else after - before,
            peak_rss_mb=_peak_rss_mb(folio.pid),
            fakes_cpu_seconds=None if fakes_before is None or fakes_after is None else fakes_after - fakes_before,
        )
    return result, usage


def _build_index(corpus: Path, data: Path) -> None:
    """Index the corpus once into a cache beside the temp folder (unchanged files are skipped), then copy it."""
    from bot.ingest import index_files
    from bot.retrieval.local import LocalRetriever

    cache = Path(tempfile.gettempdir()) / "folio-bench-index" / "index.sqlite"

    async def build() -> None:
        retriever = LocalRetriever(cache)
        try:
            report = await index_files(sorted(corpus.glob("*.pdf")), retriever, container=CONTAINER)
        finally:
            await retriever.close()
        if report.failed:
            raise ConfigurationError(f"The bench corpus could not be indexed: {report.failed[0]}")

    asyncio.run(build())
    data.mkdir(parents=True, exist_ok=True)
    shutil.copy(cache, data / "index.sqlite")


@contextmanager
def _fakes(latency_ms: float, token_delay_ms: float) -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, str(FAKES), "--model-latency-ms", str(latency_ms), "--token-delay-ms",
               str(token_delay_ms)]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        if not line:
            raise ConfigurationError(f"The bench fakes did not start ({FAKES}); run it by hand to see why.")
        yield process, json.loads(line)
    finally:
        if process.stdin:
            process.stdin.close()
        _stop(process)


@contextmanager
def _folio(
    work: Path, data: Path, urls: dict[str, str], port: int, *, streaming: bool
) -> Iterator[subprocess.Popen[bytes]]:
    env = {name: value for name, value in os.environ.items() if not name.upper().startswith(_OURS)}
    env.update({
        "SLACK_BOT_TOKEN": urls["slack_token"], "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": urls["slack_api_url"],
        "PORT": str(port), "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": urls["model_base_url"],
        "FOLIO_MODEL_FAST": "bench-model", "FOLIO_CODE_INTERPRETER": "false", "FOLIO_DATA_DIR": str(data),
        "FOLIO_CHANNELS_FILE": str(work / "channels.yaml"), "FOLIO_LOG_LEVEL": "WARNING",
        "FOLIO_STREAMING": "true" if streaming else "false",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    })  # fmt: skip
    log = (work / "folio.log").open("wb")
    command = [sys.executable, "-m", "bot", "--env-file", str(work / "none.env"), "serve", "--host", "127.0.0.1"]
    process = subprocess.Popen(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(process, port, work / "folio.log")
        yield process
    finally:
        _stop(process)
        log.close()


def _wait_healthy(process: subprocess.Popen[bytes], port: int, log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigurationError(f"Folio stopped at start-up:\n{log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise ConfigurationError(f"Folio did not answer on port {port} within {timeout:.0f} s; see {log}.")


def _stop(process: subprocess.Popen) -> None:  # type: ignore[type-arg]
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process, from /proc (Linux); None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float | None:
    """The process's peak resident memory (VmHWM), from /proc (Linux); None elsewhere."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None
