"""`folio index PATH... --container NAME [--tag KEY=VALUE ...] [--date YYYY-MM-DD] [--prune] [--follow-symlinks]
[--ocr auto|off|force]`"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import date
from pathlib import Path

from bot import messages
from bot.app import builders, open_folio
from bot.cli.common import HelpFormatter, parse_tags, settings_from
from bot.cli.progress import ProgressBar
from bot.errors import InvalidInput
from bot.ingest import IndexReport, collect_files, gone_files, index_files
from bot.ingest.lifecycle import remove_files
from bot.ingest.pipeline import check_container_name
from bot.models import Scope
from bot.retrieval.filters import check_tag_keys

DESCRIPTION = """\
Index documents into a container, page by page: PDFs (scanned pages OCR'd), text and Markdown, Word, PowerPoint and
Excel files and their OpenDocument kin (through LibreOffice, kept as a PDF named orders.xlsx.pdf), CSV, web pages
and e-mail (.eml, attachments as files of their own). Spreadsheets and CSV files are indexed as tables, whole rows
under their header. Folders are searched recursively; hidden files are left out, and so are symbolic links unless
--follow-symlinks. A file already indexed from the same place with the same content, tags and date is skipped; a
changed one replaces its old passages. Files whose converter is not installed are skipped with the package to install.
Files of the container that were indexed from a folder named here and are no longer in it are reported; --prune
removes them (passages, vectors and Folio's copy; links to them then say the document was removed)."""

EPILOG = """\
examples:
  folio index ./contracts --container legal --tag department=legal
  folio index ./contracts --container legal --prune          # also remove what left ./contracts
  folio index policy-2026.pdf --container finance --tag year=2026 --date 2026-01-12
  folio index ../shared/corpus --container benefits"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "index", help="index documents into a container", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=HelpFormatter,
    )  # fmt: skip
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a file or a folder")
    parser.add_argument("--container", required=True, metavar="NAME", help="the container the documents go into")
    parser.add_argument("--tag", metavar="KEY=VALUE", action="append", default=[], help="label every file; repeatable")
    parser.add_argument("--date", metavar="YYYY-MM-DD", help="document date (default: PDF metadata, else file time)")
    parser.add_argument(
        "--prune", action="store_true", help="remove files of the container that left the folders named"
    )
    parser.add_argument("--follow-symlinks", action="store_true", help="index symbolic links inside folders too")
    parser.add_argument(
        "--ocr", choices=("auto", "off", "force"), default=None,
        help="OCR pages without text: auto (when Tesseract is installed; FOLIO_OCR), off, force (OCR every page)",
    )  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Index the named files and print a summary; exit status 1 when any file failed."""
    settings = settings_from(args)
    container = check_container_name(args.container.strip())
    scope = Scope(container=container, tags=parse_tags(args.tag))
    check_tag_keys(scope)
    day = _iso_date(args.date)
    collected = collect_files(args.paths, follow_symlinks=args.follow_symlinks)

    async def go() -> IndexReport:
        async with open_folio(settings) as folio:
            with ProgressBar(len(collected.files), "Indexing") as bar:
                report = await index_files(
                    collected.files, folio.retriever, container=container, tags=scope.tags, date=day,
                    on_file=bar.advance, documents=folio.documents, max_chars=settings.folio_max_file_chars,
                    converters=builders.converters(settings, ocr=args.ocr),
                )  # fmt: skip
            report.skipped.extend(collected.skipped)
            report.gone = gone_files(await folio.retriever.files(container), args.paths, collected.files,
                                     collected.unreadable)  # fmt: skip
            if args.prune and report.gone:
                report.removed = await remove_files(folio.retriever, folio.documents, report.gone)
            return report

    report = asyncio.run(go())
    _print(report, args, container)
    return 1 if report.failed else 0


def _print(report: IndexReport, args: argparse.Namespace, container: str) -> None:
    for failure in report.failed:
        print(f"folio: not indexed: {failure}", file=sys.stderr)
    for note in report.notes:
        print(f"folio: note: {note}", file=sys.stderr)
    print(report.summary())
    names = [held.file for held in report.gone]
    if report.removed:
        print(messages.pruned(names))
    elif names:
        folders = " ".join(str(path) for path in args.paths if path.is_dir())
        print(messages.gone_from_folder(names, container=container, folders=folders), file=sys.stderr)


def _iso_date(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError as exc:
        raise InvalidInput(f"--date {text!r} is not a date of the form YYYY-MM-DD (for example 2025-03-31).") from exc
