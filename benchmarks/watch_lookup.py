"""The watch's lookup: the threads that cited 10 changed documents, among N threads citing 1,000 documents (issue 34).

Each thread cites 3 documents, written as `ConversationStore.save` writes them (bot.store.watch.cite_in); the lookup
is `threads_citing` (one ZRANGEBYSCORE a document, one round trip). Timed at 1,000 and 10,000 threads: a lookup
stays flat, a scan would grow tenfold. Then the watch step of a run that changed nothing (only additions, or no
change at all): it returns before any I/O. A redis-server of its own on a Unix socket in a temporary folder.

    flock /tmp/bench.lock .venv/bin/python benchmarks/watch_lookup.py [--rounds 300]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from redis.asyncio import Redis  # noqa: E402

from bot.models import DocumentChange  # noqa: E402
from bot.store import ConversationStore, ThreadKey  # noqa: E402
from bot.store.watch import cite_in  # noqa: E402
from bot.turns.watch import watch_changes  # noqa: E402

DOCUMENTS, CITED_EACH, CHANGED = 1000, 3, 10


async def fill(redis: Redis, prefix: str, threads: int) -> None:
    rng, now = random.Random(7), time.time()
    async with redis.pipeline(transaction=False) as pipe:
        for n in range(threads):
            thread = ThreadKey(team="T1", channel=f"C{n % 50:04d}", thread_ts=f"1700000000.{n:06d}")
            documents = [("bench", f"doc{d}.pdf") for d in rng.sample(range(DOCUMENTS), CITED_EACH)]
            cite_in(pipe, prefix, thread, documents, now=now - rng.random() * 86400 * 20, ttl=30 * 86400)
        await pipe.execute()


async def lookup_ms(store: ConversationStore, rounds: int) -> tuple[float, int]:
    changed = [("bench", f"doc{d}.pdf") for d in range(0, DOCUMENTS, DOCUMENTS // CHANGED)]
    times, found = [], 0
    for _ in range(rounds):
        started = time.perf_counter()
        cited = await store.threads_citing(changed, since=time.time() - 30 * 86400)
        times.append((time.perf_counter() - started) * 1000)
        found = sum(len(threads) for threads in cited.values())
    return statistics.median(times), found


async def nothing_changed_us(store: ConversationStore, rounds: int) -> tuple[float, float]:
    added = [DocumentChange(container="bench", document="new.pdf", identity="new.pdf", kind="added", new_version="v1")]
    results = []
    for changes in ([], added):
        started = time.perf_counter()
        for _ in range(rounds):
            await watch_changes(changes, store=store, retriever=None, policy=None, watch_days=30)  # type: ignore[arg-type]
        results.append((time.perf_counter() - started) / rounds * 1e6)
    return results[0], results[1]


async def main(rounds: int, socket: Path) -> None:
    for threads in (1000, 10000):
        redis = Redis(unix_socket_path=str(socket))
        await redis.flushall()
        prefix = f"bench{threads}"
        await fill(redis, prefix, threads)
        store = ConversationStore(redis, prefix=prefix)
        median, found = await lookup_ms(store, rounds)
        print(
            f"{threads:>6} threads, {DOCUMENTS} documents: threads of {CHANGED} changed documents in "
            f"{median:.2f} ms (median of {rounds}; {found} threads found)"
        )
        if threads == 10000:
            empty, added = await nothing_changed_us(store, rounds * 100)
            print(f"watch step of a run with no change: {empty:.2f} µs; with only additions: {added:.2f} µs")
        await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        socket = Path(folder) / "redis.sock"
        server = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", str(socket), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )
        try:
            for _ in range(100):
                if socket.exists():
                    break
                time.sleep(0.05)
            asyncio.run(main(args.rounds, socket))
        finally:
            server.terminate()
            server.wait()
