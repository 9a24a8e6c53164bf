"""`folio list [--container NAME] [--json]`: what is indexed, file by file."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from bot import messages
from bot.app import open_folio
from bot.cli.common import HelpFormatter, check_container, settings_from
from bot.cli.render import printable
from bot.models import display_name
from bot.retrieval import IndexedFile

EPILOG = """\
examples:
  folio list
  folio list --container legal
  folio list --container legal --json"""

COLUMNS = ("container", "file", "pages", "passages", "tags", "date", "indexed at", "read")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list the indexed documents",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
        description="List the files each container holds: pages, passages, tags, document date, when each was "
        "indexed, and how it was read when not as itself (LibreOffice, OCR, tables, web page, mail).",
    )
    parser.add_argument("--container", metavar="NAME", help="only this container (default: all)")
    parser.add_argument("--json", action="store_true", help="print a JSON array, one object per file")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the files of one container, or of all."""
    settings = settings_from(args)

    async def go() -> list[tuple[IndexedFile, str]]:
        async with open_folio(settings) as folio:
            await check_container(folio, args.container)
            names = [args.container] if args.container else list(await folio.retriever.containers())
            held = [held for name in names for held in await folio.retriever.files(name)]
            return [(one, folio.documents.read_as(one.container, one.file) if folio.documents else "") for one in held]

    listed = asyncio.run(go())
    if args.json:
        print(json.dumps([file_json(held, read) for held, read in listed], ensure_ascii=False, indent=2))
    elif not listed:
        print(messages.NOTHING_INDEXED, file=sys.stderr)
    else:
        print(table([COLUMNS, *(row(held, read) for held, read in listed)]))
    return 0


def file_json(held: IndexedFile, read: str = "") -> dict[str, object]:
    """One file as --json shows it."""
    return {
        "container": held.container,
        "file": display_name(held.file),  # as people see it; `folio remove` takes it
        "pages": held.pages,
        "passages": held.passages,
        "tags": [str(tag) for tag in held.tags],
        "date": held.doc_date,
        "indexed_at": held.indexed_at,
        "source": held.source,
        "read": read or None,  # "OCR (3 pages)", "LibreOffice", ...; None: read as itself
    }


def row(held: IndexedFile, read: str = "") -> tuple[str, ...]:
    indexed = (held.indexed_at or "-").replace("T", " ").removesuffix("+00:00")
    tags = " ".join(str(tag) for tag in held.tags) or "-"
    pages = "-" if held.pages is None else str(held.pages)
    name = printable(display_name(held.file))
    cells = (held.container, name, pages, str(held.passages), tags, held.doc_date or "-", indexed)
    return (*cells, read or "-")


def table(rows: list[tuple[str, ...]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned."""
    widths = [max(len(cells[i]) for cells in rows) for i in range(len(rows[0]))]
    numeric = {COLUMNS.index("pages"), COLUMNS.index("passages")}
    lines = []
    for cells in rows:
        parts = [cell.rjust(w) if i in numeric else cell.ljust(w) for i, (cell, w) in enumerate(zip(cells, widths))]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)
