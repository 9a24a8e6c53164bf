"""`folio index PATH... --container NAME [--tag KEY=VALUE ...] [--date YYYY-MM-DD]`"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import date
from pathlib import Path

from bot.app import open_folio
from bot.cli.common import HelpFormatter, parse_tags, settings_from
from bot.cli.progress import Progress
from bot.errors import InvalidInput
from bot.ingest import collect_files, index_files
from bot.models import Scope
from bot.retrieval.filters import check_tag_keys

DESCRIPTION = """\
Index PDFs, text and Markdown files into a container, page by page. Folders are searched recursively.
A file already indexed with the same content, tags and date is skipped; a changed one replaces its old passages.
Converted spreadsheets keep their real name (orders.xlsx.pdf) and are marked as tables."""

EPILOG = """\
examples:
  folio index ./contracts --container legal --tag department=legal
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
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Index the named files and print a summary; exit status 1 when any file failed."""
    settings = settings_from(args)
    scope = Scope(container=args.container, tags=parse_tags(args.tag)) if args.container.strip() else None
    if scope is None:
        raise InvalidInput("--container must not be empty: name the container the documents go into.")
    check_tag_keys(scope)
    day = _iso_date(args.date)
    files = collect_files(args.paths)
    container = args.container.strip()

    async def go() -> int:
        async with open_folio(settings) as folio:
            with Progress(len(files), "Indexing") as bar:
                report = await index_files(
                    files, folio.retriever, container=container, tags=scope.tags, date=day, on_file=bar.advance,
                    documents=folio.documents,  # the copies Folio's own citation links open
                )
        for failure in report.failed:
            print(f"folio: not indexed: {failure}", file=sys.stderr)
        print(report.summary())
        return 1 if report.failed else 0

    return asyncio.run(go())


def _iso_date(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError as exc:
        raise InvalidInput(f"--date {text!r} is not a date of the form YYYY-MM-DD (for example 2025-03-31).") from exc
