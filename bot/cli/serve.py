"""`folio serve`: Folio in Slack — Socket Mode when SLACK_APP_TOKEN is set, else HTTP on PORT at /slack/events.

Without SLACK_BOT_TOKEN it says so in one line and chats in the terminal on the embedded defaults instead.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from bot import messages
from bot.app import open_folio
from bot.cli.chat import chat
from bot.cli.common import HelpFormatter, settings_from
from bot.cli.document_links import DocumentServer, serve_documents
from bot.config import Settings
from bot.slack.app import EVENTS_PATH, build_app, web_app
from bot.slack.site import running_site

log = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve", help="run Folio in Slack (a terminal chat when Slack is not configured)",
        description="Serve Slack: Socket Mode when SLACK_APP_TOKEN is set, else HTTP events on PORT at "
        f"{EVENTS_PATH}. Without SLACK_BOT_TOKEN, chat in the terminal instead.",
        epilog="examples:\n"
        "  folio serve                         # settings from the environment and .env\n"
        "  PORT=8080 folio serve --host 127.0.0.1\n"
        "see README.md, 'Connect to Slack', for the tokens and the app manifest.",
        formatter_class=HelpFormatter,
    )  # fmt: skip
    parser.add_argument("--host", default="0.0.0.0", help="HTTP interface to listen on (default: all)")
    parser.add_argument("--port", type=int, help="HTTP port (default: $PORT, else 3000)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until stopped (SIGINT / SIGTERM)."""
    settings = settings_from(args)
    if not settings.slack_configured:
        print(messages.SLACK_NOT_CONFIGURED, flush=True)
        return chat(settings)
    return asyncio.run(serve(settings, host=args.host, port=args.port or settings.port))


async def serve(
    settings: Settings,
    *,
    host: str = "0.0.0.0",
    port: int | None = None,
    stop: asyncio.Event | None = None,
    started: Callable[[int], None] | None = None,
    **clients: Any,
) -> int:
    """Open Folio and serve Slack until `stop` is set (or a stop signal arrives); `clients` go to `open_folio`."""
    stop = stop or _stop_on_signals()
    port = settings.port if port is None else port
    async with open_folio(settings, serving=True, **clients) as folio:
        assert folio.store is not None
        await folio.store.ping()
        app = build_app(folio)
        if folio.access is not None:  # a group handle Slack does not know is reported now, by name
            await folio.access.unknown_groups(folio.channel_policy())
        documents = DocumentServer.for_links(folio.links)  # None unless FOLIO_PUBLIC_URL is set
        if not folio.links.reach_people:
            log.warning("citations carry no links: set FOLIO_PUBLIC_URL (Folio serves the PDFs) or FOLIO_DOCS_BASE_URL")
        if settings.slack_app_token is not None:
            # Socket Mode needs no HTTP server, but signed document links do: serve them alone on PORT.
            async with serve_documents(documents, host, port, started):
                await _socket_mode(app, settings.slack_app_token.get_secret_value(), stop)
        else:
            await _http(app, host, port, stop, started, documents)
    return 0


async def _http(
    app: AsyncApp, host: str, port: int, stop: asyncio.Event, started: Callable[[int], None] | None,
    documents: DocumentServer | None = None,
) -> None:  # fmt: skip
    announce = f"Folio is listening for Slack on {{url}}{EVENTS_PATH}"
    application = web_app(app, *(documents.routes() if documents else ()))
    async with running_site(application, host, port, announce=announce, started=started):
        await stop.wait()


async def _socket_mode(app: AsyncApp, app_token: str, stop: asyncio.Event) -> None:
    handler = AsyncSocketModeHandler(app, app_token)
    await handler.connect_async()
    print("Folio is connected to Slack (Socket Mode).", file=sys.stderr, flush=True)
    try:
        await stop.wait()
    finally:
        await handler.close_async()


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with suppress(NotImplementedError):  # Windows has no signal handlers in asyncio
            loop.add_signal_handler(sig, stop.set)
    return stop
