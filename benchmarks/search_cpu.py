"""CPU of the local keyword ranking alone, in one process, A/B in interleaved rounds (steadier than wall-clock runs on
a shared machine: each round runs both ways back to back, and the median of the rounds is reported).

    .venv/bin/python benchmarks/search_cpu.py --index /tmp/bench.sqlite --container bench --rounds 6
    .venv/bin/python benchmarks/search_cpu.py --index /tmp/bench.sqlite --container bench --tag copy:even
    .venv/bin/python benchmarks/search_cpu.py                    # the shared corpus, indexed into a temporary file

A: the engine as it is; B: the scope's container tokens kept in the MATCH even when the scope holds the whole index
(what `local_sql.covers_index` avoids), to measure that shortcut. An index of 50,000 chunks in one container:
`benchmarks/retrieval_speed.py --keep /tmp/bench.sqlite` writes one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.ingest import IndexOptions, index_files  # noqa: E402
from bot.models import Scope, Tag  # noqa: E402
from bot.retrieval import local_sql  # noqa: E402
from bot.retrieval.local import CANDIDATES, LocalRetriever  # noqa: E402

SHORT = ["hearing aids", "deductible", "parental leave", "gym membership", "prior authorization", "copay specialist"]


def measure(
    index: Path, container: str, tags: tuple[Tag, ...], questions: list[str], rounds: int
) -> dict[str, list[float]]:
    retriever = LocalRetriever(index)
    db = retriever._connect()  # the benchmark drives the blocking SQL layer directly, in this thread
    scope = Scope(container=container, tags=tags)
    whole = local_sql.covers_index
    ways = {"as is": whole, "scope tokens in the MATCH": lambda containers, vocabulary: False}
    spent: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, rule in ways.items():
            local_sql.covers_index = rule
            vocabulary = retriever._vocabulary(db)
            for question in questions:  # warm
                local_sql.keyword_ranking(db, question, scope, CANDIDATES, vocabulary)
            started = time.process_time()
            for question in questions:
                local_sql.keyword_ranking(db, question, scope, CANDIDATES, vocabulary)
            spent[name].append((time.process_time() - started) * 1000 / len(questions))
    local_sql.covers_index = whole
    print(f"{index}: container {container!r} holds the whole index: {whole([container], retriever._vocabulary(db))}")
    db.close()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--index", type=Path, help="an index file to search (default: the corpus, indexed now)")
    parser.add_argument("--container", default="benefits")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--tag", action="append", default=[], help="key:value, a tag filter (repeatable)")
    args = parser.parse_args()
    lines = (args.corpus / "ground_truth.jsonl").read_text().splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()] + SHORT
    with tempfile.TemporaryDirectory() as folder:
        index = args.index
        if index is None:
            index = Path(folder) / "index.sqlite"
            built = LocalRetriever(index)
            asyncio.run(index_files(sorted(args.corpus.glob("*.pdf")), built, IndexOptions(container=args.container)))
            asyncio.run(built.close())
        tags = tuple(Tag.parse(tag) for tag in args.tag)
        for name, values in measure(index, args.container, tags, questions, args.rounds).items():
            shown = ", ".join(f"{value:.2f}" for value in values)
            print(f"  {name:26s} median {statistics.median(values):.2f} ms CPU per ranking ({shown})")


if __name__ == "__main__":
    main()
