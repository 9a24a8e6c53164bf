"""Seconds to convert one Office file with LibreOffice, and OCR pages per second (issue 20), then a real `folio index`
of a folder holding one file of every kind Folio reads.

    .venv/bin/python benchmarks/conversion.py [--scan-pages 4] [--keep FOLDER]

Makes one file of each Office kind (python-docx, python-pptx, openpyxl, a hand-written OpenDocument text; .doc .rtf
.ppt .odp .xls .ods are made from those by LibreOffice first, untimed), converts each to PDF with Folio's own
`convert` (the process's first conversion, which also makes the LibreOffice profile, is reported apart), and OCRs a
scanned PDF of N image-only pages with `ocr_pdf`. Wall seconds and the CPU seconds of the child processes are both
given: on a shared machine the wall figure moves with the load, the CPU figure much less.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.ingest.convert import convert
from bot.ingest.converters import Converters
from bot.ingest.ocr import ocr_pdf
from tests.ingest import made_files

LEGACY = {
    "report.doc": "report.docx",
    "report.rtf": "report.docx",
    "deck.ppt": "deck.pptx",
    "deck.odp": "deck.pptx",
    "orders.xls": "orders.xlsx",
    "orders.ods": "orders.xlsx",
}


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(action: Callable[[], object]) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), children_cpu()
    result = action()
    return time.perf_counter() - wall, children_cpu() - cpu, result


def make_folder(folder: Path, work: Path, converters: Converters, scan_pages: int) -> None:
    made_files.docx(folder / "report.docx")
    made_files.pptx(folder / "deck.pptx")
    made_files.xlsx(folder / "orders.xlsx")
    made_files.odt(folder / "safety.odt")
    for name, source in LEGACY.items():
        (folder / name).write_bytes(convert(folder / source, name.rsplit(".", 1)[1], converters))
    made_files.html(folder / "guide.html")
    made_files.eml(folder / "offer.eml")
    made_files.csv(folder / "stock.csv")
    made_files.scan(folder / "scan.pdf")
    pages = [
        made_files.scan(folder / f".page{n}.pdf", (f"Page {n} of the long scan.", made_files.SCAN_FACT))
        for n in range(1, scan_pages + 1)
    ]
    from pypdf import PdfWriter

    writer = PdfWriter()
    for page in pages:
        writer.append(str(page))
        page.unlink()
    with open(work / "long_scan.pdf", "wb") as out:
        writer.write(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scan-pages", type=int, default=4, help="pages of the scanned PDF OCR'd for pages/s")
    parser.add_argument("--keep", type=Path, help="make the folder here and keep it (default: a temporary one)")
    args = parser.parse_args()
    converters = Converters(jobs=1)
    if not (converters.find("soffice") and converters.ocr_ready()):
        print("conversion.py: LibreOffice, OCRmyPDF and Tesseract must be installed (see docs/documents.md)")
        return 2
    work = Path(tempfile.mkdtemp(prefix="folio-bench-convert-"))
    folder = args.keep or work / "every-kind"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        first = timed(lambda: convert(made_files.odt(work / "warm-up.odt"), "pdf", converters))
        print(f"first conversion of the process (makes the profile): {first[0]:.1f} s wall, {first[1]:.1f} s CPU")
        make_folder(folder, work, converters, args.scan_pages)
        print("\n| file | wall s | CPU s |\n| --- | --- | --- |")
        walls = []
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in {
                ".docx",
                ".doc",
                ".odt",
                ".rtf",
                ".pptx",
                ".ppt",
                ".odp",
                ".xlsx",
                ".xls",
                ".ods",
            }:
                wall, cpu, _ = timed(lambda path=path: convert(path, "pdf", converters))
                walls.append(wall)
                print(f"| {path.name} | {wall:.1f} | {cpu:.1f} |")
        print(f"\nmedian {sorted(walls)[len(walls) // 2]:.1f} s wall per Office file ({len(walls)} files)")
        wall, cpu, _ = timed(lambda: ocr_pdf(work / "long_scan.pdf", "long_scan.pdf", converters))
        pages = args.scan_pages
        print(
            f"OCR: {pages} pages in {wall:.1f} s wall ({pages / wall:.2f} pages/s), {cpu:.1f} s CPU "
            f"({pages / cpu:.2f} pages per CPU-second)"
        )
        env = {**os.environ, "FOLIO_DATA_DIR": str(work / "data"), "FOLIO_SAMPLE_CORPUS": "false"}
        folio = shutil.which("folio", path=str(Path(sys.executable).parent)) or "folio"
        command = [folio, "index", str(folder), "--container", "shared-drive"]
        wall, cpu, done = timed(lambda: subprocess.run(command, env=env, capture_output=True, text=True, check=False))
        print(f"\n$ folio index {folder.name} --container shared-drive   # {wall:.0f} s wall, {cpu:.0f} s CPU")
        print(done.stderr.strip())  # type: ignore[attr-defined]
        print(done.stdout.strip())  # type: ignore[attr-defined]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
