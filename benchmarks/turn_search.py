"""CPU of the searches of one bench turn, in one process: what `folio serve` spends under benchmarks/peer_run.py.

The bench's fake model (benchmarks/bench_fakes.py) asks, each turn, rewrite_query(the question) and then two
search_documents in one batch: the question, and the question + " costs and limits". The agent runs both through
`LocalRetriever.search` (the thread pool, the keyword ranking, the rerank, the score gap) with the channel's scope
(container "benefits", no tags) and top 6 (FOLIO_SEARCH_TOP's default). This does exactly that, over the ground
truth's questions, and reports the process's CPU per turn (both searches), median of interleaved rounds, for each
index given:

    .venv/bin/python benchmarks/turn_search.py                          # the shared corpus, indexed now (fresh)
    .venv/bin/python benchmarks/turn_search.py --index /tmp/folio-bench-index/<hash>/index.sqlite
    .venv/bin/python benchmarks/turn_search.py --reindex 6              # fresh, then re-indexed 6 times over

The bench indexes into a cache shared by every checkout (benchmarks/bench.py `_build_index`): the branch point and
today's code chunk differently, so each A/B run re-indexes every file into the same file. `--reindex N` replays that
(each file replaced N more times, alternately with another chunk size) to show what it does to a search's CPU.
Each index is copied first: searching never changes the file given.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.ingest import IndexOptions, index_files  # noqa: E402
from bot.ingest.chunking import CHUNK_CHARS  # noqa: E402
from bot.models import Scope  # noqa: E402
from bot.retrieval.local import LocalRetriever  # noqa: E402

CONTAINER = "benefits"  # benchmarks/bench.py CONTAINER, the bench channel's scope
TOP = 6


def fts_size(index: Path) -> tuple[int, int]:
    """(blocks, bytes) of the FTS5 index's own data: how much a MATCH may have to read."""
    import sqlite3

    db = sqlite3.connect(index)
    try:
        blocks, size = db.execute("SELECT count(*), sum(length(block)) FROM chunks_fts_data").fetchone()
    finally:
        db.close()
    return int(blocks), int(size or 0)


async def _turns(retriever: LocalRetriever, questions: list[str]) -> list[list[str]]:
    scope = Scope(container=CONTAINER)
    shown = []
    for question in questions:
        found = await asyncio.gather(
            retriever.search(question, scope, top=TOP), retriever.search(f"{question} costs and limits", scope, top=TOP)
        )
        shown.append([f"{chunk.id}:{chunk.score}" for chunks in found for chunk in chunks])
    return shown


def measure(indexes: dict[str, Path], questions: list[str], rounds: int) -> dict[str, tuple[list[float], list]]:
    retrievers = {name: LocalRetriever(path) for name, path in indexes.items()}
    spent: dict[str, list[float]] = {name: [] for name in indexes}
    results: dict[str, list] = {}
    for name, retriever in retrievers.items():  # warm: connection, vocabulary, stems
        results[name] = asyncio.run(_turns(retriever, questions))
    for _ in range(rounds):
        for name, retriever in retrievers.items():
            started = time.process_time()
            asyncio.run(_turns(retriever, questions))
            spent[name].append((time.process_time() - started) * 1000 / len(questions))
    for retriever in retrievers.values():
        asyncio.run(retriever.close())
    return {name: (spent[name], results[name]) for name in indexes}


async def _index(corpus: Path, path: Path, reindex: int) -> None:
    files = sorted(corpus.glob("*.pdf"))
    retriever = LocalRetriever(path)
    try:
        await index_files(files, retriever, IndexOptions(container=CONTAINER))
        for time_ in range(reindex):  # another chunk size each time (every passage replaced), the last the default
            size = CHUNK_CHARS if (reindex - time_) % 2 == 1 else CHUNK_CHARS + 200
            await index_files(files, retriever, IndexOptions(container=CONTAINER, chunk_chars=size))
    finally:
        await retriever.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--index", type=Path, action="append", default=[], help="an index file (copied first)")
    parser.add_argument("--reindex", type=int, action="append", default=[], help="a fresh index re-indexed N times")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--results", type=Path, help="write every turn's results (chunk id:score), to compare codes")
    args = parser.parse_args()
    lines = (args.corpus / "ground_truth.jsonl").read_text().splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    with tempfile.TemporaryDirectory() as folder:
        indexes: dict[str, Path] = {}
        for number, given in enumerate(args.index):
            indexes[str(given)] = Path(folder) / f"given{number}.sqlite"
            shutil.copy(given, indexes[str(given)])
        for times in args.reindex or ([] if args.index else [0]):
            indexes[f"fresh, re-indexed {times}x"] = path = Path(folder) / f"fresh{times}.sqlite"
            asyncio.run(_index(args.corpus, path, times))
        measured = measure(indexes, questions, args.rounds)
        if args.results:
            args.results.write_text(json.dumps({name: shown for name, (_, shown) in measured.items()}, indent=0))
        for name, (values, _) in measured.items():
            blocks, size = fts_size(indexes[name])
            shown = ", ".join(f"{value:.2f}" for value in values)
            print(f"{name}: FTS5 data {blocks} blocks, {size / 1024:.0f} KiB")
            print(f"  median {statistics.median(values):.2f} ms CPU per turn (two searches) ({shown})")


if __name__ == "__main__":
    main()
