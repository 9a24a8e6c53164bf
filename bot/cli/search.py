"""`folio search QUERY [--container NAME | --channel ID] [--tag KEY=VALUE ...] [--top K] [--json]`"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from bot import messages
from bot.agent.quotes import content_words, quote_window, topic_words
from bot.app import open_folio
from bot.cli.common import HelpFormatter, add_scope_arguments, checked_scope, settings_from
from bot.cli.render import BOLD, Style, printable, wrap
from bot.models import Chunk, Scope, display_name


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "search",
        help="search the documents of a container (no model involved)",
        description="Search the documents of a container and print the best passages with their file and page.",
        epilog="examples:\n"
        '  folio search "hearing aids" --container benefits --json\n'
        '  folio search "refund window" --tag year=2026\n'
        '  folio search "payment terms" --channel C0FINANCE1 --top 3',
        formatter_class=HelpFormatter,
    )
    parser.add_argument("query", metavar="QUERY", help="what to look for")
    add_scope_arguments(parser)
    parser.add_argument("--top", type=int, metavar="K", help="how many passages at most (default: FOLIO_SEARCH_TOP)")
    parser.add_argument("--json", action="store_true", help="print a JSON array of results")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run one search and print the results."""
    settings = settings_from(args)
    top = args.top or settings.folio_search_top

    async def go() -> tuple[Scope, list[Chunk], int]:
        async with open_folio(settings) as folio:
            scope = await checked_scope(args, folio)
            results = await folio.retriever.search(args.query, scope, top=top)
            held = sum([await folio.retriever.count(c) for c in scope.containers]) if not results else len(results)
            return scope, results, held

    scope, results, held = asyncio.run(go())
    if not results:
        note = messages.empty_container(scope.describe()) if held == 0 else messages.no_match(scope.describe())
        print(note, file=sys.stderr)
    if args.json:
        print(json.dumps([result_json(chunk) for chunk in results], ensure_ascii=False, indent=2))
    else:
        style = Style.detect(sys.stdout, os.environ)
        for number, chunk in enumerate(results, start=1):
            print(result_line(number, chunk, query=args.query, style=style))
    return 0


def result_json(chunk: Chunk) -> dict[str, object]:
    """One result as the --json output shows it."""
    return {
        "file": display_name(chunk.file),
        "page": chunk.page,
        "container": chunk.container,
        "tags": [str(tag) for tag in chunk.tags],
        "score": chunk.score,
        "text": chunk.text,
        "id": chunk.id,
        "doc_date": chunk.doc_date,
        "tabular": chunk.tabular,
        "context": chunk.context,
    }


def result_line(number: int, chunk: Chunk, *, query: str, style: Style = Style()) -> str:
    """`1. file.pdf p.12 (score 8.31, dated 2026-01-12)` and, indented, the sentences that match the query."""
    name = display_name(chunk.file)
    where = printable(f"{name} p.{chunk.page}" if chunk.page else name)
    about = f"score {chunk.score:.3f}" + (f", {messages.dated(chunk.doc_date)}" if chunk.doc_date else "")
    snippet = printable(quote_window(chunk.text, topic_words(content_words(query), chunk), tabular=chunk.tabular))
    return f"{style.paint(f'{number}. {where}', BOLD)} ({about})\n" + wrap(f"   {snippet}", style.width)
