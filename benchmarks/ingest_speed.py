"""Indexing speed on the shared corpus: PDF pages read per CPU-second, and the seconds an unchanged re-run takes.

    .venv/bin/python benchmarks/ingest_speed.py                 # ../shared/corpus, 3 rounds of reading
    .venv/bin/python benchmarks/ingest_speed.py --rounds 5 --corpus path/to/pdfs

1. Reading: every PDF is read with `read_document` (the reader `folio index` uses: text, page numbers, metadata),
   timed in CPU seconds of this process, so other work on a shared machine counts less than it would in wall time.
2. `folio index CORPUS --container bench` run twice as a user runs it, each in its own process on a fresh data
   folder: the first run indexes, the second finds every file unchanged. Wall seconds for each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.ingest.readers import read_document  # noqa: E402


def read_rate(pdfs: list[Path], rounds: int) -> tuple[int, float]:
    """(pages, CPU seconds) to read every PDF once, the best of `rounds`."""
    best = float("inf")
    pages = 0
    for _ in range(rounds):
        started = time.process_time()
        pages = sum(len(read_document(pdf).pages) for pdf in pdfs)
        best = min(best, time.process_time() - started)
    return pages, best


def index_run(corpus: Path, data: Path) -> tuple[float, str]:
    """(wall seconds, the summary line) of one `folio index` run in a process of its own."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FOLIO_", "OPENAI_", "AZURE_"))}
    env |= {"FOLIO_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bot", "index", str(corpus), "--container", "bench"],
        capture_output=True, text=True, env=env, cwd=data, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"folio index failed ({done.returncode}): {done.stderr.strip()}")
    return seconds, done.stdout.strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    pdfs = sorted(args.corpus.glob("*.pdf"))
    if not pdfs:
        raise SystemExit(f"no PDFs in {args.corpus}")
    pages, seconds = read_rate(pdfs, args.rounds)
    print(f"read {len(pdfs)} PDFs, {pages} pages in {seconds:.2f} CPU s (best of {args.rounds}): "
          f"{pages / seconds:.0f} pages per CPU-second")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        first, summary = index_run(args.corpus, Path(folder))
        print(f"folio index, first run: {first:.2f} s wall ({summary})")
        again, summary = index_run(args.corpus, Path(folder))
        print(f"folio index, unchanged re-run: {again:.2f} s wall ({summary})")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
