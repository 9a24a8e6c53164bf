"""`folio remove FILE... --container NAME`: take documents out of Folio."""

from __future__ import annotations

import argparse
import asyncio
import sys

from bot import messages
from bot.app import open_folio
from bot.app.changes import documents_changed, index_changes
from bot.cli.common import HelpFormatter, check_container, settings_from
from bot.ingest.lifecycle import named, remove_files
from bot.models import display_name
from bot.retrieval import IndexedFile

DESCRIPTION = """\
Remove indexed files from a container: their passages and vectors leave the index and Folio's copy is deleted, so
no search finds them again and citation links posted before say the document was removed. Name files as
`folio list` shows them (a path names the file of its last part)."""

EPILOG = """\
examples:
  folio remove old-policy.pdf --container finance
  folio remove contract-a.pdf contract-b.pdf --container legal
  folio list --container legal                 # the names to give"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "remove",
        help="remove indexed documents",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="a file name as `folio list` shows it")
    parser.add_argument("--container", required=True, metavar="NAME", help="the container the files are in")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Remove the named files; exit status 1 when a name matched no file of the container."""
    settings = settings_from(args)

    async def go() -> tuple[list[IndexedFile], list[str]]:
        async with open_folio(settings) as folio:
            await check_container(folio, args.container)
            found, unknown = named(await folio.retriever.files(args.container), args.files)
            removed = await remove_files(folio.retriever, folio.documents, found)
            await documents_changed(index_changes(removed, []), folio=folio)
            return removed, unknown

    removed, unknown = asyncio.run(go())
    for held in removed:
        print(messages.removed_file(display_name(held.file), held.passages))
    if unknown:
        print(messages.not_in_container(unknown, args.container), file=sys.stderr)
    return 1 if unknown else 0
