"""How long a small file whose text is far over FOLIO_MAX_FILE_CHARS takes to be refused (issue 30 item 5), and
what a zip bomb costs (FOLIO_MAX_UNPACKED_MB).

    .venv/bin/python benchmarks/spreadsheet_bomb.py [--cells 400000] [--limit 1000] [--rounds 3] [--packed-mb 500]

Makes an .xlsx of `--cells` short cells (openpyxl, write-only), a mail of 40 text attachments of 900 characters and
an .xlsx whose shared-string table is one string of `--packed-mb` MB (a few hundred KB on disk), then reads each with
Folio's `read_file` under a `--limit` character limit, as `folio index` does, and prints the wall and CPU seconds
until it is refused (best of `--rounds`), the file's size, what it was refused with, and the growth of the process's
peak memory (the packed one is read first, so the figure is its own). Runs against whichever `bot` is first on the
path (PYTHONPATH=an export of main for "before").
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import zipfile
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.errors import UnreadableFile  # noqa: E402
from bot.ingest.formats import read_file  # noqa: E402


def spreadsheet(path: Path, cells: int) -> Path:
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("Bomb")
    for row in range(cells // 10):
        sheet.append([f"r{row}c{column}" for column in range(10)])
    book.save(path)
    return path


def packed(path: Path, megabytes: int) -> Path:
    """A minimal workbook whose one cell is a shared string of `megabytes` MB of one letter, written as it packs."""
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    relations = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    package = "http://schemas.openxmlformats.org/package/2006/relationships"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as book:
        book.writestr(
            "[Content_Types].xml",
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            '<Override PartName="/xl/sharedStrings.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
        )
        book.writestr(
            "_rels/.rels",
            f'<Relationships xmlns="{package}"><Relationship Id="r1" Target="xl/workbook.xml" '
            f'Type="{relations}/officeDocument"/></Relationships>',
        )
        book.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{main}" xmlns:r="{relations}"><sheets><sheet name="S" sheetId="1" r:id="r1"/>'
            "</sheets></workbook>",
        )
        book.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<Relationships xmlns="{package}"><Relationship Id="r1" Type="{relations}/worksheet" '
            f'Target="worksheets/sheet1.xml"/><Relationship Id="r2" Type="{relations}/sharedStrings" '
            'Target="sharedStrings.xml"/></Relationships>',
        )
        book.writestr(
            "xl/worksheets/sheet1.xml",
            f'<worksheet xmlns="{main}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>',
        )
        with book.open("xl/sharedStrings.xml", "w", force_zip64=True) as strings:
            strings.write(f'<sst xmlns="{main}" count="1" uniqueCount="1"><si><t>'.encode())
            for _ in range(megabytes):
                strings.write(b"A" * 1024 * 1024)
            strings.write(b"</t></si></sst>")
    return path


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def mail(path: Path) -> Path:
    message = EmailMessage()
    message["Subject"], message["From"] = "Bomb", "a@example.com"
    message.set_content("Forty parts.")
    for number in range(40):
        text = f"Part {number} says " + "words " * 148
        message.add_attachment(text.encode(), maintype="text", subtype="plain", filename=f"part{number}.txt")
    path.write_bytes(bytes(message))
    return path


def refusal(path: Path, limit: int, rounds: int) -> tuple[float, float, str]:
    """Best wall and CPU seconds of `rounds` reads, and how the last one ended."""
    best_wall = best_cpu = float("inf")
    said = ""
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            document = read_file(path, max_chars=limit)
            said = f"read: {len(document.parts)} attachments indexed"
        except UnreadableFile as exc:
            said = str(exc)[:90]
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu, said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", type=int, default=400_000)
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--packed-mb", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="folio-bomb-") as work:
        made = packed(Path(work) / "packed.xlsx", args.packed_mb)
        for path in (made, spreadsheet(Path(work) / "bomb.xlsx", args.cells), mail(Path(work) / "bomb.eml")):
            before = peak_mb()
            wall, cpu, said = refusal(path, args.limit, args.rounds)
            size = path.stat().st_size
            grew = peak_mb() - before
            print(
                f"{path.name} ({size:,} bytes): {wall:.3f} s wall, {cpu:.3f} CPU s (best of {args.rounds}), "
                f"peak memory +{grew:.0f} MB: {said}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
