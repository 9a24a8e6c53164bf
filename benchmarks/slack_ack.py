"""Slack ack latency and turn throughput of the real Bolt app (fake Slack and fake model on 127.0.0.1).

    .venv/bin/python benchmarks/slack_ack.py                        # 200 mentions in 40 threads, 20 at a time
    .venv/bin/python benchmarks/slack_ack.py --events 500 --threads 100 --concurrency 50 --model-latency 0.5

Slack retries an event it does not see acknowledged within 3 seconds. Each mention is POSTed signed to
/slack/events as Slack does; the ack time is the HTTP round trip (dedupe and the thread's place in line are taken
before it). Turns run after the ack against the fake model (fixed latency) and the local sample index, with an
embedded Redis. Prints p50 / p95 / max ack milliseconds, and how long until every answer was posted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402

from bot.app import Given, open_folio  # noqa: E402
from bot.config import ChannelPolicy, Settings  # noqa: E402
from bot.slack.app import EVENTS_PATH, build_app, web_app  # noqa: E402
from bot.tasks import BackgroundTasks  # noqa: E402
from tests.fakes.openai_responses import FakeResponses, reply  # noqa: E402
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack  # noqa: E402
from tests.slack.harness import SECRET, sign  # noqa: E402

CHANNEL = "C0BENCH001"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def run(events: int, threads: int, concurrency: int, model_latency: float) -> None:
    # Everything opened is closed on the way out, errors included: the embedded Redis server, and then the folder.
    with (
        tempfile.TemporaryDirectory(prefix="folio-ack-bench-") as folder,
        FakeSlack() as slack,
        FakeResponses(latency=model_latency) as model_server,
    ):
        model_server.respond_with(lambda request: reply("Benchmark answer."))
        async with AsyncExitStack() as stack:
            url, tasks = await _serve(stack, Path(folder), slack, model_server)
            began = time.perf_counter()
            acks = await _mentions(url, events, threads, concurrency)
            acked = time.perf_counter() - began
            await tasks.drain()
            done = time.perf_counter() - began
        posted = [call.get("text", "") for call in slack.calls_of("chat.postMessage")]
    answers = sum("Benchmark answer" in text for text in posted)
    for text in sorted({text for text in posted if "Benchmark answer" not in text}):
        print("other message:", text[:200])
    ms = [a * 1000 for a in acks]
    print(f"events={events} threads={threads} concurrency={concurrency} model_latency={model_latency}s")
    print(f"ack ms: p50={statistics.median(ms):.1f} p95={percentile(ms, 0.95):.1f} max={max(ms):.1f}")
    print(f"all acked in {acked:.2f}s; all {answers} answers posted after {done:.2f}s ({answers / done:.1f} turns/s)")


async def _serve(
    stack: AsyncExitStack, data: Path, slack: FakeSlack, model_server: FakeResponses
) -> tuple[str, BackgroundTasks]:
    """Folio on 127.0.0.1 against the fakes; every client is closed by `stack`. Returns the events URL."""
    settings = Settings(
        slack_bot_token=slack.token,
        slack_signing_secret=SECRET,
        slack_api_url=slack.base_url,
        folio_data_dir=data,
        folio_code_interpreter=False,
    )
    model = model_server.client()
    stack.push_async_callback(model.close)
    policy = ChannelPolicy.model_validate({"channels": {CHANNEL: {"container": "sample"}}})
    folio = await stack.enter_async_context(open_folio(settings, Given(model=model, policy=policy), serving=True))
    runner = web.AppRunner(web_app(build_app(folio)), access_log=None)
    await runner.setup()
    stack.push_async_callback(runner.cleanup)
    stack.push_async_callback(folio.tasks.cancel)  # runs first: turns left over after an error
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return f"http://127.0.0.1:{runner.addresses[0][1]}{EVENTS_PATH}", folio.tasks


async def _mentions(url: str, events: int, threads: int, concurrency: int) -> list[float]:
    """POST `events` signed mentions across `threads` threads, `concurrency` at a time; the ack time of each."""
    acks: list[float] = []
    gate = asyncio.Semaphore(concurrency)
    roots = [f"1900000000.{n:06d}" for n in range(threads)]

    async def mention(http: aiohttp.ClientSession, n: int) -> None:
        ts = f"1900000001.{n:06d}"
        event = {
            "type": "app_mention",
            "user": "U0BENCH01",
            "text": f"<@{BOT_USER}> refund policy for Acme?",
            "ts": ts,
            "thread_ts": roots[n % threads],
            "channel": CHANNEL,
            "event_ts": ts,
        }
        body = json.dumps({"type": "event_callback", "team_id": TEAM, "event_id": f"EvB{n}", "event": event})
        async with gate:
            started = time.perf_counter()
            async with http.post(url, data=body, headers={**sign(body), "Content-Type": "application/json"}) as r:
                assert r.status == 200, r.status
            acks.append(time.perf_counter() - started)

    async with aiohttp.ClientSession() as http:
        await asyncio.gather(*(mention(http, n) for n in range(events)))
    return acks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--threads", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--model-latency", type=float, default=0.2)
    args = parser.parse_args()
    asyncio.run(run(args.events, args.threads, args.concurrency, args.model_latency))


if __name__ == "__main__":
    main()
