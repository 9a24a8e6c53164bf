"""`folio serve`: Folio in Slack — Socket Mode when SLACK_APP_TOKEN is set, else HTTP on PORT at /slack/events.

Without SLACK_BOT_TOKEN it says so in one line and chats in the terminal on the embedded defaults instead.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import socket
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager, suppress
from typing import TYPE_CHECKING, Any, TextIO

import aiohttp
from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import logs, messages
from bot.app import SHUTDOWN_GRACE, open_folio
from bot.app.health import Readiness, ReadyCheck, unreachable
from bot.app.redis_server import EmbeddedRedis
from bot.cli.chat import chat
from bot.cli.common import HelpFormatter, settings_from, stop_on_signals
from bot.cli.document_links import DocumentServer, serve_documents
from bot.cli.workers import stop_with_parent, supervise, tell_parent
from bot.config import Settings
from bot.errors import ConfigurationError, InvalidInput
from bot.ports import Listeners
from bot.slack.app import EVENTS_PATH, build_app, web_app
from bot.slack.services import SlackFolio
from bot.slack.site import ops_routes, running_site
from bot.tasks import finish_or_hand_back

if TYPE_CHECKING:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

log = logging.getLogger(__name__)

LISTENING = "Folio is listening for Slack on {url}" + EVENTS_PATH
CONNECTED = "Folio is connected to Slack (Socket Mode)."
SLACK_RETRY_FIRST = 1.0  # seconds before asking Slack again when it could not be reached at start; doubling ...
SLACK_RETRY_MAX = 30.0  # ... up to this
GC_YOUNG_THRESHOLD = 10_000  # allocations between two collections of the youngest generation (Python: 700)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve", help="run Folio in Slack (a terminal chat when Slack is not configured)",
        description="Serve Slack: Socket Mode when SLACK_APP_TOKEN is set, else HTTP events on PORT at "
        f"{EVENTS_PATH}. Without SLACK_BOT_TOKEN, chat in the terminal instead.",
        epilog="examples:\n"
        "  folio serve                         # settings from the environment and .env\n"
        "  PORT=8080 folio serve --host 127.0.0.1\n"
        "  folio serve --workers 2             # two processes on one port, one Redis; SIGTERM drains both\n"
        "see README.md, 'Connect to Slack', for the tokens and the app manifest.",
        formatter_class=HelpFormatter,
    )  # fmt: skip
    parser.add_argument("--host", default="0.0.0.0", help="HTTP interface to listen on (default: all)")
    parser.add_argument("--port", type=port_number, help="HTTP port (default: $PORT, else 3000)")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="processes sharing the port (or N Socket Mode connections), one Redis between them; "
                        "SIGTERM lets each finish its running turns (default 1)")  # fmt: skip
    parser.add_argument("--worker-ready", type=int, help=argparse.SUPPRESS)  # a worker's pipe to its parent
    parser.add_argument("--listen-fds", help=argparse.SUPPRESS)  # a worker's sockets from its parent (bot.ports)
    parser.add_argument("--worker-number", type=int, default=1, help=argparse.SUPPRESS)  # 1: says start-up warnings
    parser.set_defaults(run=run)


def port_number(text: str) -> int:
    """--port's value: 0 (any free port) to 65535, else a usage error rather than a traceback from bind()."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port number (0-65535)")
    return port


def _nobody_to_chat_with(stdin: TextIO | None) -> bool:
    """Whether the terminal chat would end at once with nobody having typed: no stdin, or /dev/null (a container
    started without -i, a systemd unit). Exiting 0 there only has a supervisor start Folio again, saying nothing."""
    if stdin is None:
        return True
    try:
        fd = stdin.fileno()
    except (OSError, ValueError):  # an in-memory stream (tests): someone gives it input
        return False
    if os.isatty(fd):
        return False
    return stat.S_ISCHR(os.fstat(fd).st_mode)  # a character device that is not a terminal: /dev/null


def run(args: argparse.Namespace) -> int:
    """Serve until stopped (SIGINT / SIGTERM): in this process, or in `--workers N` processes started from here."""
    settings = settings_from(args)
    if not settings.slack_configured:
        if _nobody_to_chat_with(sys.stdin):
            raise ConfigurationError(messages.SLACK_NOT_CONFIGURED_NO_TERMINAL)
        print(messages.SLACK_NOT_CONFIGURED, flush=True)
        return chat(settings)
    port = settings.port if args.port is None else args.port
    if args.workers < 1:
        raise InvalidInput("--workers must be 1 or more.")
    try:
        if args.workers > 1:
            return asyncio.run(supervise(settings, args, host=args.host, port=port))
        if args.worker_ready is not None:  # one of the workers `supervise` started
            quiet = args.worker_number > 1  # the first worker has said the start-up warnings
            listeners = Listeners.inherited(args.listen_fds or "-,-")
            worker = _serve_as_worker(settings, host=args.host, port=port, ready_fd=args.worker_ready, quiet=quiet,
                                      listeners=listeners)  # fmt: skip
            return asyncio.run(worker)
        listeners = Listeners.open(settings, host=args.host, port=port)  # connections wait in its queue from now on
        return asyncio.run(serve(settings, host=args.host, port=port, listeners=listeners))
    finally:
        # The interpreter's last collections at exit walk the whole heap of modules: ~2 s of a restart on a busy
        # machine (benchmarks/restart.py). Out of the collector's sight, they are freed without that walk.
        gc.freeze()


async def _serve_as_worker(
    settings: Settings, *, host: str, port: int, ready_fd: int, quiet: bool, listeners: Listeners
) -> int:
    """One worker of `--workers N`: beside the others on the port, stopping with a signal or with its parent;
    `quiet`: without the start-up warnings (until it serves), which the first worker has said."""
    stop = stop_on_signals()
    stop_with_parent(stop)
    speak = logs.quiet_warnings() if quiet else lambda: None

    def ready() -> None:
        speak()
        tell_parent(ready_fd)

    return await serve(settings, host=host, port=port, stop=stop, shared=True, on_ready=ready, listeners=listeners)


async def serve(
    settings: Settings,
    *,
    host: str = "0.0.0.0",
    port: int | None = None,
    stop: asyncio.Event | None = None,
    started: Callable[[int], None] | None = None,
    shared: bool = False,
    on_ready: Callable[[], None] | None = None,
    listeners: Listeners | None = None,
    **clients: Any,
) -> int:
    """Open Folio and serve Slack until `stop` is set (or a stop signal arrives); `clients` go to `open_folio`.

    `shared`: one worker of `--workers N`, listening beside the others (SO_REUSEPORT) and announcing nothing;
    `on_ready` is called once it serves (or, while Slack cannot be reached, once /healthz answers); `listeners`: the
    sockets already listening (bot.ports; None: bind here). Returns 1 when the
    embedded Redis keeps dying, so that a supervisor starts Folio afresh. On `stop`: see `_drain`."""
    stop = stop or stop_on_signals()
    port = settings.port if port is None else port
    async with open_folio(settings, serving=True, **clients) as folio:
        folio = SlackFolio.of(folio)  # store, Slack client, policy, access; or ConfigurationError saying what to set
        await folio.store.ping()
        app = build_app(folio)
        ready = Readiness(folio)
        documents = DocumentServer.for_links(folio.links)  # None unless FOLIO_PUBLIC_URL is set
        if not folio.links.reach_people:
            log.warning("citations carry no links: set FOLIO_PUBLIC_URL (Folio serves the PDFs) or FOLIO_DOCS_BASE_URL")
        app_token = settings.slack_app_token
        port_serves = documents is not None or app_token is None  # something listens on PORT
        intake: list[Callable[[], Awaitable[None]]] = []  # what takes events: stopped first on the way out
        async with AsyncExitStack() as running:
            running.enter_context(_settled_heap())
            listeners = listeners or Listeners()
            metrics_port = settings.folio_metrics_port if listeners.metrics is None else 0
            metrics_site = _metrics_site(metrics_port, host, ready, port, port_serves, shared=shared,
                                         sock=listeners.metrics)  # fmt: skip
            await running.enter_async_context(metrics_site)
            sock = listeners.events
            if app_token is not None:
                # Socket Mode needs no HTTP server, but signed document links do: serve them alone on PORT.
                await running.enter_async_context(serve_documents(documents, host, port, started, ready, shared, sock))
            else:
                application = web_app(app, *(documents.routes() if documents else ()), ready=ready)
                announce = None if shared else LISTENING
                site = running_site(application, host, port, announce=announce, started=started, shared=shared,
                                    sock=sock)  # fmt: skip
                intake.append((await running.enter_async_context(site)).stop_taking)
            tell = _once(on_ready)
            if not await _reach_slack(folio, ready, stop, listening=tell if app_token is None else _once(None)):
                return 0  # stopped before Slack ever answered: nothing ran
            if app_token is not None:
                handler = await running.enter_async_context(_socket_mode(app, app_token.get_secret_value(), shared))
                intake.append(handler.close_async)
            tell()
            code = await _until_stopped(stop, folio.redis_server)
            await _drain(folio, ready, intake)
            return code


def _once(call: Callable[[], None] | None) -> Callable[[], None]:
    """`call`, run the first time only (nothing when None)."""
    pending = [call] if call is not None else []
    return lambda: pending.pop()() if pending else None


async def _reach_slack(
    folio: SlackFolio, ready: Readiness, stop: asyncio.Event, *, listening: Callable[[], None]
) -> bool:
    """auth.test until Slack answers (True), or until `stop` (False). A token Slack refuses is a ConfigurationError
    (no retry mends it); while Slack cannot be reached, /readyz says why, /healthz and /metrics answer, and the log
    says the cause once per change: an orchestrator sees a live process waiting, not one restarted in a loop."""
    url = folio.settings.slack_api_url
    delay, said = SLACK_RETRY_FIRST, None
    while (problem := await check_bot_token(folio.slack, url)) is not None:
        if problem != said:
            log.warning("%s Folio keeps trying; /readyz answers 503 until Slack answers.", problem)
        ready.slack = said = problem
        listening()  # a worker waiting for Slack is up (/healthz): its parent need not wait for it
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)
        if stop.is_set():
            return False
        delay = min(delay * 2, SLACK_RETRY_MAX)
    if said is not None:
        log.warning("Slack answers at SLACK_API_URL now; Folio is ready.")
    ready.slack = None
    if folio.access is not None:  # a group handle Slack does not know is reported now, by name
        await folio.access.unknown_groups(folio.channel_policy())
    return True


async def _drain(folio: SlackFolio, ready: Readiness, intake: list[Callable[[], Awaitable[None]]]) -> None:
    """A stop, in the order a redeploy without a gap needs: /readyz answers 503 (a load balancer stops sending), after
    FOLIO_STOP_DELAY no new events are taken (the HTTP listener closes, the Socket Mode connection ends), then the
    turns in flight finish within SHUTDOWN_GRACE or are handed back unfinished (`finish_or_hand_back`)."""
    ready.stopping = True
    folio.consumer.pause()  # no other worker's turn is taken on now; this one's keep their leases while they drain
    delay = folio.settings.folio_stop_delay
    log.info("stopping: /readyz answers 503%s", f"; taking events for {delay:g} s more" if delay else "")
    if delay:
        await asyncio.sleep(delay)
    for stop_taking in intake:
        await stop_taking()
    log.info("stopping: no new events are taken")
    await finish_or_hand_back(folio.tasks, grace=SHUTDOWN_GRACE, hand_back=folio.consumer.hand_back)
    await folio.consumer.stop()  # its leases are all given back or done: nothing more to renew or claim


@contextmanager
def _settled_heap() -> Iterator[None]:
    """While serving: what start-up built (modules, schemas, clients: most of the heap) is out of the cyclic garbage
    collector's sight, and young objects are collected less often. A turn allocates thousands of short-lived objects,
    and each full collection would walk the whole heap again (1 to 2 ms of a turn in `benchmarks/bench.py`)."""
    thresholds = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


@asynccontextmanager
async def _metrics_site(
    metrics_port: int | None, host: str, ready: ReadyCheck, port: int, port_serves: bool, *, shared: bool,
    sock: socket.socket | None = None,
) -> AsyncIterator[None]:  # fmt: skip
    """/metrics, /healthz and /readyz on FOLIO_METRICS_PORT (or `sock`, listening on it already), unless it is PORT
    and the site there serves them."""
    if sock is None and (metrics_port is None or (metrics_port == port and port_serves)):
        yield
        return
    application = web.Application()
    application.add_routes(ops_routes(ready))
    announce = None if shared else "Folio serves /metrics, /healthz and /readyz on {url}"
    site = running_site(application, host, metrics_port or 0, announce=announce, setting="FOLIO_METRICS_PORT",
                        shared=shared, sock=sock)  # fmt: skip
    async with site:
        yield


async def check_bot_token(client: AsyncWebClient, api_url: str) -> str | None:
    """auth.test: None when Slack answers; why, when it cannot be reached (the real cause: DNS, refused, TLS, time).
    A token Slack refuses is a ConfigurationError naming SLACK_BOT_TOKEN, not an error per event."""
    try:
        await client.auth_test()
    except SlackApiError as exc:
        raise ConfigurationError(messages.slack_token_refused("SLACK_BOT_TOKEN", exc.response.get("error"))) from exc
    except (aiohttp.ClientError, TimeoutError) as exc:
        return unreachable(exc, service="Slack", url=api_url, setting="SLACK_API_URL")
    return None


@asynccontextmanager
async def _socket_mode(app: AsyncApp, app_token: str, quiet: bool = False) -> AsyncIterator[AsyncSocketModeHandler]:
    try:  # slack_sdk retries a refused connection for ever, logging each failure: ask once, and say why here
        await app.client.apps_connections_open(app_token=app_token)
    except SlackApiError as exc:
        raise ConfigurationError(messages.slack_token_refused("SLACK_APP_TOKEN", exc.response.get("error"))) from exc
    # Imported here: only Socket Mode needs it, and HTTP mode starts without it.
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    handler = AsyncSocketModeHandler(app, app_token)
    await handler.connect_async()
    if not quiet:
        logs.say(CONNECTED)
    try:
        yield handler
    finally:
        await handler.close_async()


async def _until_stopped(stop: asyncio.Event, redis: EmbeddedRedis | None) -> int:
    """Wait for `stop`; 1 as soon as the embedded Redis has given up."""
    waits = [asyncio.ensure_future(stop.wait())]
    if redis is not None:
        waits.append(asyncio.ensure_future(redis.gave_up.wait()))
    _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for waiter in pending:
        waiter.cancel()
    if redis is not None and redis.gave_up.is_set():
        logs.say(f"folio: {messages.EMBEDDED_REDIS_GAVE_UP}", level=logging.ERROR)
        return 1
    return 0
