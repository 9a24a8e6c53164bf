"""Indexing speed on the shared corpus: PDF pages read per CPU-second, and the seconds an unchanged re-run takes.

    .venv/bin/python benchmarks/ingest_speed.py                 # ../shared/corpus, 3 rounds of reading
    .venv/bin/python benchmarks/ingest_speed.py --rounds 5 --corpus path/to/pdfs

1. Reading: every PDF is read with `read_document` (the reader `folio index` uses: text, page numbers, metadata),
   timed in CPU seconds of this process, so other work on a shared machine counts less than it would in wall time.
2. `index_files` (what `folio index` runs once started) on a fresh local index, twice: the second run finds every
   file unchanged. Wall and CPU seconds for each.
3. `folio index CORPUS --container bench [--jobs N]` run twice as a user runs it, each in its own process on a fresh
   data folder, and `import bot.cli` alone: how much of a command's time is Python starting and importing Folio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.ingest import IndexOptions, index_files  # noqa: E402
from bot.ingest.readers import read_document  # noqa: E402
from bot.retrieval.local import LocalRetriever  # noqa: E402


def read_rate(pdfs: list[Path], rounds: int) -> tuple[int, float]:
    """(pages, CPU seconds) to read every PDF once, the best of `rounds`."""
    best = float("inf")
    pages = 0
    for _ in range(rounds):
        started = time.process_time()
        pages = sum(len(read_document(pdf).pages) for pdf in pdfs)
        best = min(best, time.process_time() - started)
    return pages, best


async def in_process(pdfs: list[Path], folder: Path) -> list[tuple[float, float, str]]:
    """(wall seconds, CPU seconds, summary) of index_files on a fresh index, then again with nothing changed."""
    index = LocalRetriever(folder / "index.sqlite")
    runs = []
    try:
        for _ in range(2):
            wall, cpu = time.perf_counter(), time.process_time()
            report = await index_files(pdfs, index, IndexOptions(container="bench"))
            runs.append((time.perf_counter() - wall, time.process_time() - cpu, report.summary()))
    finally:
        await index.close()
    return runs


def index_run(corpus: Path, data: Path, *, jobs: int = 1, command: list[str] | None = None) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of it and its children, the summary line) of one `folio index` run in a process of
    its own."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FOLIO_", "OPENAI_", "AZURE_"))}
    env |= {"FOLIO_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    argv = command or ["-m", "bot", "index", str(corpus), "--container", "bench", "--jobs", str(jobs)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, cwd=data, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode != 0:
        raise SystemExit(f"folio index failed ({done.returncode}): {done.stderr.strip()}")
    return seconds, cpu, (done.stdout.strip().splitlines() or [""])[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1, help="the --jobs of the `folio index` runs")
    args = parser.parse_args()
    pdfs = sorted(args.corpus.glob("*.pdf"))
    if not pdfs:
        raise SystemExit(f"no PDFs in {args.corpus}")
    pages, seconds = read_rate(pdfs, args.rounds)
    print(
        f"read {len(pdfs)} PDFs, {pages} pages in {seconds:.2f} CPU s (best of {args.rounds}): "
        f"{pages / seconds:.0f} pages per CPU-second"
    )
    with tempfile.TemporaryDirectory() as folder:
        runs = asyncio.run(in_process(pdfs, Path(folder)))
        for label, (wall, cpu, summary) in zip(("first run", "unchanged re-run"), runs):
            print(f"index_files, {label}: {wall:.3f} s wall, {cpu:.3f} CPU s ({summary})")
    with tempfile.TemporaryDirectory() as folder:
        for label in ("first run", "unchanged re-run"):
            wall, cpu, summary = index_run(args.corpus, Path(folder), jobs=args.jobs)
            print(f"folio index --jobs {args.jobs}, {label}: {wall:.2f} s wall, {cpu:.2f} CPU s ({summary})")
        wall, cpu, _ = index_run(args.corpus, Path(folder), command=["-c", "import bot.cli"])
        print(f"python -c 'import bot.cli' (start-up alone): {wall:.2f} s wall, {cpu:.2f} CPU s")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
