"""`folio watch [--post] [--json]`: what the watch did in its last runs (documents changed or removed, threads
checked, notes found and posted) and how many notes wait; `--post` posts the waiting ones (bot.turns.watch_post)."""

from __future__ import annotations

import argparse
import asyncio
import json
from contextlib import AsyncExitStack
from datetime import UTC, datetime

import aiohttp
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.app import builders, open_store
from bot.app.health import unreachable
from bot.cli.common import HelpFormatter, settings_from
from bot.errors import ConfigurationError, FolioError
from bot.store import ConversationStore
from bot.store.watch import WatchRecord
from bot.turns.watch_post import post_notes

EPILOG = """\
examples:
  folio watch                 # the last runs and the notes waiting
  folio watch --post          # post the notes waiting (a syncer without a Slack token left them)
  folio watch --json"""

COLUMNS = ("run (UTC)", "documents", "threads", "notes", "posted")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "watch",
        help="what the watch of changed documents did, and the notes waiting",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
        description="Every `folio sync`, `index` and `remove` that changes or removes documents tells the threads "
        "whose answers cited them, with one note each. This lists the last runs (documents changed or removed, "
        "threads checked, notes found, notes posted) and how many notes wait to be posted.",
    )
    parser.add_argument("--post", action="store_true", help="post the notes waiting (needs SLACK_BOT_TOKEN)")
    parser.add_argument("--json", action="store_true", help="print JSON: the runs, newest first, and the waiting")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the last runs and the notes waiting (after posting them with --post)."""
    settings = settings_from(args)
    if args.post and not settings.slack_configured:
        raise ConfigurationError(messages.WATCH_POST_NEEDS_SLACK)

    async def go() -> tuple[list[WatchRecord], int, int]:
        async with AsyncExitStack() as stack:
            store = (await stack.enter_async_context(open_store(settings))).conversations
            posted = 0
            if args.post:
                session = builders.slack_http_session()
                stack.push_async_callback(session.close)
                posted = await _post(store, builders.slack_client(settings, session), settings.slack_api_url)
            outbox = store.outbox()
            return await outbox.runs(), await outbox.pending(), posted

    runs, pending, posted = asyncio.run(go())
    if args.json:
        print(json.dumps({"runs": [run.model_dump() for run in runs], "pending": pending, "posted_now": posted}))
        return 0
    print(table(runs))
    if args.post:
        print(messages.watch_posted_now(posted))
    print(messages.watch_pending(pending))
    return 0


async def _post(store: ConversationStore, slack: AsyncWebClient, api_url: str) -> int:
    """Post the notes waiting; a Slack that cannot be reached is said in one line naming the cause and its fix."""
    try:
        return await post_notes(store, slack)
    except (aiohttp.ClientError, TimeoutError) as exc:  # slack_sdk does not wrap aiohttp's errors
        raise FolioError(unreachable(exc, service="Slack", url=api_url, setting="SLACK_API_URL")) from exc


def table(runs: list[WatchRecord]) -> str:
    """The runs as aligned columns, newest first."""
    rows = [COLUMNS] + [
        (
            datetime.fromtimestamp(run.at, UTC).strftime("%Y-%m-%d %H:%M"),
            *map(str, (run.documents, run.threads, run.notes, run.posted)),
        )
        for run in runs
    ]
    if len(rows) == 1:
        return messages.WATCH_NO_RUNS
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows)
