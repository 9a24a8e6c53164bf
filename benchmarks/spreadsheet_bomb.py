"""How long a small file whose text is far over FOLIO_MAX_FILE_CHARS takes to be refused (issue 30 item 5).

    .venv/bin/python benchmarks/spreadsheet_bomb.py [--cells 400000] [--limit 1000] [--rounds 3]

Makes an .xlsx of `--cells` short cells (openpyxl, write-only) and a mail of 40 text attachments of 900 characters,
then reads each with Folio's `read_file` under a `--limit` character limit, as `folio index` does, and prints the
wall and CPU seconds until it is refused (best of `--rounds`), the file's size, and what it was refused with.
Runs against whichever `bot` is first on the path (PYTHONPATH=an export of main for "before").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="folio-bomb-") as work:
        for path in (spreadsheet(Path(work) / "bomb.xlsx", args.cells), mail(Path(work) / "bomb.eml")):
            wall, cpu, said = refusal(path, args.limit, args.rounds)
            size = path.stat().st_size
            print(f"{path.name} ({size:,} bytes): {wall:.3f} s wall, {cpu:.3f} CPU s (best of {args.rounds}): {said}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
