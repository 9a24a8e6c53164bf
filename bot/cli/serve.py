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

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from bot import messages
from bot.cli.chat import chat_loop
from bot.cli.common import HelpFormatter, settings_from
from bot.config import Settings, load_policy
from bot.slack.app import EVENTS_PATH, build_app, slack_http_session, web_app
from bot.slack.documents import DocumentServer, serve_documents
from bot.slack.site import running_site
from bot.slack.tasks import BackgroundTasks
from bot.wiring import build_agent_options, build_model_client, build_retriever, build_store, ensure_sample_index
from bot.wiring import build_document_server

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 30.0  # seconds running turns may take to finish after a stop signal


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
        return asyncio.run(chat_loop(settings, input_stream=sys.stdin, output=sys.stdout))
    return asyncio.run(serve(settings, host=args.host, port=args.port or settings.port))


async def serve(
    settings: Settings,
    *,
    host: str = "0.0.0.0",
    port: int | None = None,
    stop: asyncio.Event | None = None,
    started: Callable[[int], None] | None = None,
) -> int:
    """Build everything from Settings and serve Slack until `stop` is set (or a stop signal arrives)."""
    policy = load_policy(settings.folio_channels_file)
    store = build_store(settings)
    retriever = build_retriever(settings)
    model = build_model_client(settings)
    tasks = BackgroundTasks()
    stop = stop or _stop_on_signals()
    slack_http = slack_http_session()
    try:
        await store.ping()
        await ensure_sample_index(retriever)
        app = build_app(
            settings, session=slack_http, model=model, retriever=retriever, store=store, policy=policy,
            options=build_agent_options(settings, file_links=False), tasks=tasks,
        )  # fmt: skip
        documents = build_document_server(settings)  # None unless FOLIO_PUBLIC_URL is set
        if settings.slack_app_token is not None:
            # Socket Mode needs no HTTP server, but signed document links do: serve them alone on PORT.
            async with serve_documents(documents, host, settings.port if port is None else port, started):
                await _socket_mode(app, settings.slack_app_token.get_secret_value(), stop)
        else:
            await _http(app, host, settings.port if port is None else port, stop, started, documents)
    finally:
        await _finish(tasks)  # running turns still post through the Slack session: close it after them
        await _close(model, retriever, store, slack_http)
    return 0


async def _http(
    app: AsyncApp, host: str, port: int, stop: asyncio.Event, started: Callable[[int], None] | None,
    documents: DocumentServer | None = None,
) -> None:
    announce = f"Folio is listening for Slack on {{url}}{EVENTS_PATH}"
    async with running_site(web_app(app, documents=documents), host, port, announce=announce, started=started):
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


async def _finish(tasks: BackgroundTasks) -> None:
    """Let running turns end (they post their answers), then cancel what is left."""
    try:
        await asyncio.wait_for(tasks.drain(), SHUTDOWN_GRACE)
    except TimeoutError:
        log.warning("stopping %d turns that did not finish in %.0f s", len(tasks), SHUTDOWN_GRACE)
        await tasks.cancel()


async def _close(*clients: object) -> None:
    for client in clients:
        close = getattr(client, "close", None)
        if close is not None:
            with suppress(Exception):
                await close()
