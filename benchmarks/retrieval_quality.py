"""Retrieval quality on the shared corpus: hit@3/5/10 and MRR of one search per ground-truth question.

    .venv/bin/python benchmarks/retrieval_quality.py                    # keyword-only, default chunking
    .venv/bin/python benchmarks/retrieval_quality.py --chunk-chars 600 --overlap 150 --misses
    .venv/bin/python benchmarks/retrieval_quality.py --golden evals/paraphrase.jsonl --golden evals/heldout.jsonl

A question is a hit at k when one of the top k results is the (file, page) its truth cites: `[file.pdf#page=N]`.
Each `--golden` file (default: the corpus's ground_truth.jsonl) is scored on one index built once per mode.
The index is built fresh in a temporary folder with the same ingestion code `folio index` runs. Hybrid search is
measured too when an embedding model is configured (FOLIO_EMBEDDING_MODEL plus OPENAI_API_KEY or AZURE_OPENAI_*).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.config import load_settings  # noqa: E402
from bot.ingest import index_files  # noqa: E402
from bot.ingest.chunking import CHUNK_CHARS, OVERLAP_CHARS  # noqa: E402
from bot.models import Scope  # noqa: E402
from bot.retrieval.local import LocalRetriever  # noqa: E402
from bot.app import builders  # noqa: E402

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


async def evaluate(retriever: LocalRetriever, questions: Golden, *, misses: bool) -> dict[str, float]:
    hits = {k: 0 for k in KS}
    reciprocal = 0.0
    scope = Scope(container="benefits")
    for question, truth in questions:
        results = await retriever.search(question, scope, top=max(KS))
        pages = [(hit.file, hit.page) for hit in results]
        rank = next((n for n, page in enumerate(pages, start=1) if page in truth), None)
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
    settings = load_settings(None)
    model = builders.model_client(settings, builders.entra_credential() if builders.needs_entra_id(settings) else None)
    try:
        await _measure(args, questions, pdfs, builders.embedder(settings, model))
    finally:
        if model is not None:
            await model.close()


async def _measure(args: argparse.Namespace, questions: dict[Path, Golden], pdfs: list[Path], embedder: object) -> None:
    modes = [("keyword", None)] + ([("hybrid", embedder)] if embedder else [])
    print(f"{len(pdfs)} PDFs, chunks of {args.chunk_chars} chars, overlap {args.overlap}")
    for name, mode_embedder in modes:
        with tempfile.TemporaryDirectory() as folder:
            retriever = LocalRetriever(Path(folder) / "index.sqlite", embedder=mode_embedder, score_gap=args.score_gap)
            started = time.perf_counter()
            report = await index_files(
                pdfs, retriever, container="benefits", chunk_chars=args.chunk_chars, overlap_chars=args.overlap
            )
            built = time.perf_counter() - started
            print(f"{name}: {report.chunks} chunks, indexed in {built:.1f}s, score gap {args.score_gap}")
            for path, golden in questions.items():
                figures = await evaluate(retriever, golden, misses=args.misses)
                shown = "  ".join(f"{key} {value:.2f}" for key, value in figures.items())
                print(f"  {path.name:24s} {len(golden):3d} questions  {shown}")
            await retriever.close()
    if not embedder:
        print("hybrid   not measured: no embedding model is configured (set FOLIO_EMBEDDING_MODEL and a model key)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--golden", type=Path, action="append", help="a golden file to score (repeatable)")
    parser.add_argument("--chunk-chars", type=int, default=CHUNK_CHARS)
    parser.add_argument("--overlap", type=int, default=OVERLAP_CHARS)
    parser.add_argument("--score-gap", type=float, default=0.0, help="0 measures ranking alone (default)")
    parser.add_argument("--misses", action="store_true", help="print the questions missed at 5")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
