"""The citation viewer's cost: a page drawn cold and from the disk cache, a view's passage located and boxed, and
the one thing a turn pays for, making a citation's link.

    flock /tmp/bench.lock .venv/bin/python benchmarks/viewer_speed.py                # every page of the shared corpus
    flock /tmp/bench.lock .venv/bin/python benchmarks/viewer_speed.py --pages 40     # the first 40 pages of each PDF

1. Cold: each page through `PageCache.image` with an empty cache (PDFium draws it at 1600 px, PNG-encodes it,
   writes it): p50 / p95 / max milliseconds.
2. Cached: the same pages again, read from the cache.
3. View: for every passage indexed from those pages, the work a view request does besides the image (the page's
   text layer and character boxes, the passage located, its boxes merged line by line).
4. Link: `Links.link_for` for every passage, as a turn's render calls it once per citation (anchors, HMAC, a stat of
   the kept copy); compared with the plain signed-PDF link it replaces.
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
sys.path.insert(0, str(ROOT))

from bot.documents import DocumentStore, Links, signed_path  # noqa: E402
from bot.ingest import IndexOptions, read_document  # noqa: E402
from bot.ingest.pipeline import build_chunks, context_line  # noqa: E402
from bot.viewer.cache import PageCache  # noqa: E402
from bot.viewer.marks import line_marks  # noqa: E402
from bot.viewer.pages import text_layer  # noqa: E402
from bot.viewer.passage import Anchors, anchors_of, locate  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
KEY = b"k" * 32


def summary(name: str, seconds: list[float]) -> str:
    ms = sorted(value * 1000 for value in seconds)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"{name:<7} n={len(ms):<5} p50 {statistics.median(ms):8.2f} ms  p95 {p95:8.2f} ms  max {ms[-1]:8.2f} ms"


async def main(pages_each: int | None) -> None:
    with tempfile.TemporaryDirectory(prefix="folio-viewer-bench-") as work:
        store = DocumentStore(Path(work) / "documents")
        cache = PageCache(store, limit=10**10)
        pages: list[tuple[str, Path, int]] = []
        chunks = []
        for pdf in sorted(CORPUS.glob("*.pdf")):
            await store.keep("bench", pdf.name, pdf)
            document = read_document(pdf)
            count = len(document.pages) if pages_each is None else min(pages_each, len(document.pages))
            copy = store.stored("bench", pdf.name)
            pages += [(pdf.name, copy, number) for number in range(1, count + 1)]
            options = IndexOptions(container="bench")
            chunks += [c for c in build_chunks(document, options, context=context_line(document)) if c.page <= count]
        results = {}
        for phase in ("cold", "cached"):
            timings = []
            for name, copy, number in pages:
                started = time.perf_counter()
                await cache.image("bench", name, copy, number)
                timings.append(time.perf_counter() - started)
            results[phase] = timings
        views, located = [], 0
        for chunk in chunks:
            copy = store.stored("bench", chunk.file)
            started = time.perf_counter()
            anchors = anchors_of(chunk.text)
            place = None

            def span(text: str, anchors: Anchors = anchors) -> tuple[int, int] | None:
                nonlocal place
                place = locate(anchors, text)
                return (place.first, place.last) if place else None

            layer = text_layer(copy, chunk.page, span=span)
            if place is not None:
                line_marks(layer.boxes, place.first, place.last)
                located += 1
            views.append(time.perf_counter() - started)
        links = Links(documents=store, public_url="https://folio.example", key=KEY)
        viewer_links, pdf_links = [], []
        for chunk in chunks:
            started = time.perf_counter()
            links.link_for(chunk)
            viewer_links.append(time.perf_counter() - started)
            started = time.perf_counter()
            store.stored(chunk.container, chunk.file)
            signed_path(KEY, chunk.container, chunk.file, expires=1, page=chunk.page)
            pdf_links.append(time.perf_counter() - started)
    print(f"{len(pages)} pages of {len(list(CORPUS.glob('*.pdf')))} PDFs, {len(chunks)} passages")
    print(summary("cold", results["cold"]))
    print(summary("cached", results["cached"]))
    print(summary("view", views) + f"  located {located}/{len(chunks)}")
    print(summary("link", viewer_links) + "  (viewer link)")
    print(summary("pdflink", pdf_links) + "  (the signed PDF link it replaces)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=None, help="pages of each PDF (default: all)")
    asyncio.run(main(parser.parse_args().pages))
