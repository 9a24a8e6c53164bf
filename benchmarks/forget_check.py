"""The check before every follow-up turn: do the thread's sources still stand in the index? (issue 30, item 6)

Before: `still_indexed` (is each cited file still there, by name). Now: `forget_removed` reads the shown passages
back by id (`passage_texts`) and compares their text's fingerprint. Both on the local index, with nothing changed
(the common case: nothing is forgotten), for a thread that was shown `--sources` passages of 8 documents:

    .venv/bin/python benchmarks/forget_check.py [--sources 40] [--rounds 500]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from bot.ingest.lifecycle import forget_removed  # noqa: E402
from bot.models import Chunk, Conversation, Scope  # noqa: E402
from bot.retrieval.local import LocalRetriever  # noqa: E402

FILES, PASSAGES = 20, 50  # 1,000 passages of about 800 characters


def passage(file: int, n: int) -> Chunk:
    words = " ".join(f"word{(file * 7 + n * 13 + k) % 997}" for k in range(100))
    return Chunk(id=f"f{file}-p{n}", file=f"doc{file}.pdf", page=n + 1, container="bench", text=words)


async def measure(sources: int, rounds: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as folder:
        index = LocalRetriever(Path(folder) / "index.sqlite")
        for file in range(FILES):
            await index.replace_file("bench", f"doc{file}.pdf", "v1", [passage(file, n) for n in range(PASSAGES)])
        shown = {f"S{i + 1}": passage(i % 8, i // 8) for i in range(sources)}
        conversation = Conversation(scope=Scope(container="bench"), sources=shown)
        files = {(chunk.container, chunk.file) for chunk in shown.values()}
        before, now = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            await index.still_indexed(files)
            before.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            assert not await forget_removed(conversation, index)
            now.append((time.perf_counter() - started) * 1000)
        await index.close()
    return before, now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=500)
    args = parser.parse_args()
    before, now = asyncio.run(measure(args.sources, args.rounds))
    for name, times in (("still_indexed (before)", before), ("forget_removed (now)", now)):
        ordered = sorted(times)
        print(f"{name:24} median {statistics.median(times):.3f} ms, p95 {ordered[int(len(ordered) * 0.95)]:.3f} ms")


if __name__ == "__main__":
    main()
