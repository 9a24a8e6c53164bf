"""Local engine speed: indexing throughput and keyword query latency with the shared corpus replicated to ~50k chunks.

    .venv/bin/python benchmarks/retrieval_speed.py                 # 50,000 chunks
    .venv/bin/python benchmarks/retrieval_speed.py --chunks 10000 --keep /tmp/bench.sqlite

1. Ingest: the six PDFs through the same code as `folio index` (read, chunk, write): pages/s end to end.
2. Replicate: the chunks written again under new file names, one transaction per file, until --chunks: chunks/s.
3. Query: every ground-truth question plus short keyword queries, --rounds times, in the one container of all the
   copies, with and without a tag filter, and in an index of the six PDFs alone ("corpus", what benchmarks/bench.py
   and the peer bench search; step 1 writes it): p50 / p99 / max milliseconds per `search(...)` call (thread hop
   included), and the mean CPU time per search (all threads of this process; other load on the machine does not
   count). Both indexes hold one container each, as the embedded default does.
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

from bot.ingest import IndexOptions, index_files, read_document  # noqa: E402
from bot.ingest.pipeline import build_chunks, context_line  # noqa: E402
from bot.models import Chunk, Scope, Tag  # noqa: E402
from bot.retrieval.local import LocalRetriever  # noqa: E402

SHORT = ["hearing aids", "deductible", "parental leave", "gym membership", "prior authorization", "copay specialist"]
TAGS = (Tag(key="copy", value="even"),)


def copies(documents: list[tuple[str, list[Chunk]]], wanted: int) -> list[tuple[str, list[Chunk]]]:
    """(file name, chunks) for renamed copies of every document until `wanted` chunks; every other copy tagged."""
    made: list[tuple[str, list[Chunk]]] = []
    total, n = 0, 0
    while total < wanted:
        n += 1
        tags = TAGS if n % 2 == 0 else (Tag(key="copy", value="odd"),)
        for file, chunks in documents:
            name = f"copy{n:03d}_{file}"
            changes = {"file": name, "container": "bench", "tags": tags}
            renamed = [c.model_copy(update={**changes, "id": f"{n}-{c.id}"}) for c in chunks]
            made.append((name, renamed))
            total += len(renamed)
    return made


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return f"p50 {statistics.median(ordered):.1f} ms  p99 {p99:.1f} ms  max {ordered[-1]:.1f} ms  (n={len(ordered)})"


async def run(args: argparse.Namespace) -> None:
    pdfs = sorted(args.corpus.glob("*.pdf"))
    lines = (args.corpus / "ground_truth.jsonl").read_text().splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    with tempfile.TemporaryDirectory() as folder:
        path = args.keep or Path(folder) / "index.sqlite"
        path.unlink(missing_ok=True)
        retriever = LocalRetriever(path, score_gap=0.5)
        own = LocalRetriever(Path(folder) / "corpus.sqlite", score_gap=0.5)  # the six PDFs alone, in their own file

        started = time.perf_counter()
        report = await index_files(pdfs, own, IndexOptions(container="ingest"))
        spent = time.perf_counter() - started
        rate = report.pages / spent
        print(f"ingest    {report.pages} pages, {report.chunks} chunks in {spent:.1f}s: {rate:.0f} pages/s end to end")

        options = IndexOptions(container="bench")
        documents = []
        for pdf in pdfs:
            document = read_document(pdf)
            documents.append((document.file, build_chunks(document, options, context=context_line(document))))
        plan = copies(documents, args.chunks)
        pages_per_copy = report.pages
        started = time.perf_counter()
        for name, chunks in plan:
            await retriever.replace_file("bench", name, "bench", chunks)
        spent = time.perf_counter() - started
        written = sum(len(chunks) for _, chunks in plan)
        copies_made = len(plan) // len(documents)
        print(
            f"replicate {written} chunks ({copies_made} copies, {copies_made * pages_per_copy} pages) in {spent:.1f}s: "
            f"{written / spent:.0f} chunks/s, {copies_made * pages_per_copy / spent:.0f} pages/s written"
        )

        scopes = (
            ("no tags", retriever, Scope(container="bench")),
            ("tag filter", retriever, Scope(container="bench", tags=TAGS)),
            ("corpus", own, Scope(container="ingest")),  # the six PDFs alone, as the turn benchmarks search them
        )
        for label, index, scope in scopes:
            await index.search("warm up the cache", scope, top=6)
            samples, cpu = [], []
            for _ in range(args.rounds):
                for query in questions + SHORT:
                    started, cpu_started = time.perf_counter(), time.process_time()
                    await index.search(query, scope, top=6)
                    samples.append((time.perf_counter() - started) * 1000)
                    cpu.append((time.process_time() - cpu_started) * 1000)
            print(f"query     {label:10s} {percentiles(samples)}")
            print(f"  cpu     {label:10s} mean {statistics.fmean(cpu):.1f} ms/search, {percentiles(cpu)}")
        await retriever.close()
        await own.close()
        print(f"index file {path.stat().st_size / 1e6:.0f} MB" if path.exists() else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the index here and keep it")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
