"""`folio serve`: Folio in Slack — Socket Mode when SLACK_APP_TOKEN is set, else HTTP on PORT at /slack/events.

Without SLACK_BOT_TOKEN it says so in one line and chats in the terminal on the embedded defaults instead.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import logs, messages
from bot.app import SHUTDOWN_GRACE, Given, open_folio
from bot.app.health import Readiness, ReadyCheck, unreachable
from bot.app.redis_server import EmbeddedRedis
from bot.cli.common import stop_on_signals
from bot.cli.document_links import DocumentServer, serve_documents
from bot.cli.workers import stop_with_parent, supervise, tell_parent
from bot.config import Settings
from bot.errors import ConfigurationError
from bot.mcp.server import McpHttp
from bot.mcp.services import McpFolio
from bot.ports import Listeners
from bot.slack.app import EVENTS_PATH, build_app, serving, web_app
from bot.slack.services import SlackFolio
from bot.slack.site import Bind, Listening, ops_routes, running_site
from bot.tasks import finish_or_hand_back
from bot.turns.thread_files import sweeping_every
from bot.turns.watch_post import posting_every

if TYPE_CHECKING:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

log = logging.getLogger(__name__)

LISTENING = "Folio is listening for Slack on {url}" + EVENTS_PATH
CONNECTED = "Folio is connected to Slack (Socket Mode)."
SLACK_RETRY_FIRST = 1.0  # seconds before asking Slack again when it could not be reached at start; doubling ...
SLACK_RETRY_MAX = 30.0  # ... up to this
GC_YOUNG_THRESHOLD = 10_000  # allocations between two collections of the youngest generation (Python: 700)


def main(args: argparse.Namespace, settings: Settings, *, port: int, listeners: Listeners) -> int:
    """`folio serve` once its sockets listen (bot.cli.serve_command): serve until stopped (SIGINT / SIGTERM), in this
    process, or in `--workers N` processes started from here."""
    try:
        if args.workers > 1:
            return asyncio.run(supervise(settings, args, host=args.host, port=port, listeners=listeners))
        if args.worker_ready is not None:  # one of the workers `supervise` started
            quiet = args.worker_number > 1  # the first worker has said the start-up warnings
            worker = _serve_as_worker(
                settings, host=args.host, port=port, ready_fd=args.worker_ready, quiet=quiet, listeners=listeners
            )
            return asyncio.run(worker)
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

    hooks = ServeHooks(stop=stop, on_ready=ready)
    return await serve(settings, host=host, port=port, shared=True, listeners=listeners, hooks=hooks)


@dataclass(frozen=True, kw_only=True)
class ServeHooks:
    """How the caller of `serve` stops it and hears from it (a worker's parent, a test)."""

    stop: asyncio.Event | None = None  # set: stop serving (see `_drain`); None: on a stop signal (SIGINT / SIGTERM)
    started: Callable[[int], None] | None = None  # the port PORT's site got (port 0 in tests: which one)
    on_ready: Callable[[], None] | None = None  # it serves (or, while Slack cannot be reached, /healthz answers)


async def serve(
    settings: Settings,
    *,
    host: str = "0.0.0.0",
    port: int | None = None,
    shared: bool = False,
    listeners: Listeners | None = None,
    hooks: ServeHooks | None = None,
    given: Given | None = None,
) -> int:
    """Open Folio (with what is `given`, see `open_folio`) and serve Slack until `hooks.stop` is set (or a stop signal
    arrives).

    `shared`: one worker of `--workers N`, listening beside the others (SO_REUSEPORT) and announcing nothing;
    `listeners`: the sockets already listening (bot.ports; None: bind here). Returns 1 when the embedded Redis keeps
    dying, so that a supervisor starts Folio afresh. On `stop`: see `_drain`."""
    hooks = hooks or ServeHooks()
    stop = hooks.stop or stop_on_signals()
    port = settings.port if port is None else port
    async with open_folio(settings, given, serving=True) as folio:
        folio = serving(folio)  # store, Slack client, policy, access; or ConfigurationError saying what to set
        await folio.store.ping()
        app = build_app(folio)
        ready = Readiness(folio)
        documents = DocumentServer.for_links(folio.links)  # None unless FOLIO_PUBLIC_URL is set
        if not folio.links.reach_people:
            log.warning("citations carry no links: set FOLIO_PUBLIC_URL (Folio serves the PDFs) or FOLIO_DOCS_BASE_URL")
        agents = McpHttp.of(McpFolio.of(folio)) if settings.folio_mcp else None  # /mcp: FOLIO_MCP=true
        if agents is not None and not shared:
            logs.say(f"Folio serves agents (MCP) at {agents.url}")
        extra = [*(documents.routes() if documents else ()), *(agents.routes() if agents else ())]
        app_token = settings.slack_app_token
        port_serves = bool(extra) or app_token is None  # something listens on PORT
        intake: list[Callable[[], Awaitable[None]]] = []  # what takes events: stopped first on the way out
        async with AsyncExitStack() as running:
            running.enter_context(_settled_heap())
            listeners = listeners or Listeners()
            events = Bind(host=host, port=port, sock=listeners.events, shared=shared)
            await running.enter_async_context(
                _metrics_site(_metrics_bind(settings, listeners, events, port_serves), ready)
            )
            started = hooks.started
            if agents is not None:
                await running.enter_async_context(agents.running())
            if app_token is not None and agents is not None:
                # Socket Mode needs no HTTP server, but agents and signed document links do: serve them on PORT.
                await running.enter_async_context(_agents_site(extra, events, started=started, ready=ready))
            elif app_token is not None:
                # Socket Mode needs no HTTP server, but signed document links do: serve them alone on PORT.
                await running.enter_async_context(serve_documents(documents, events, started=started, ready=ready))
            else:
                site = running_site(web_app(app, *extra, ready=ready), events, announce=LISTENING, started=started)
                intake.append((await running.enter_async_context(site)).stop_taking)
            tell = _once(hooks.on_ready)
            if not await _reach_slack(folio, ready, stop, listening=tell if app_token is None else _once(None)):
                return 0  # stopped before Slack ever answered: nothing ran
            if app_token is not None:
                handler = await running.enter_async_context(_socket_mode(app, app_token.get_secret_value(), shared))
                intake.append(handler.close_async)
            tell()
            sweep = settings.folio_watch_sweep_seconds  # the watch notes left waiting (a syncer without Slack)
            await running.enter_async_context(posting_every(folio.store, folio.slack, seconds=sweep))
            if settings.folio_thread_files:  # also at start (bot.slack.app) and at each share
                days = settings.folio_thread_file_days
                await running.enter_async_context(sweeping_every(folio.retriever, folio.documents, days=days))
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
    """A stop, in the order a redeploy without a gap needs: /readyz answers 503 (a load balancer stops sending), and
    the consumer pauses: events still come in and are recorded in the durable intake and acked, but left for the next
    process (another worker, or the one started after this) instead of run here. Meanwhile the turns in flight finish
    within SHUTDOWN_GRACE or are handed back unfinished (`finish_or_hand_back`); only then, and after FOLIO_STOP_DELAY,
    no new events are taken (the HTTP listener closes, the Socket Mode connection ends): the port is closed for as
    short a time as the next start takes, not for the drain as well."""
    ready.stopping = True
    folio.consumer.pause()  # new deliveries are recorded and left claimable; this worker's own keep their leases
    delay = folio.settings.folio_stop_delay
    log.info("stopping: /readyz answers 503; events are recorded for the next process while running turns finish")
    drained = finish_or_hand_back(folio.tasks, grace=SHUTDOWN_GRACE, hand_back=folio.consumer.hand_back)
    await asyncio.gather(drained, asyncio.sleep(delay))
    for stop_taking in intake:
        await stop_taking()
    log.info("stopping: no new events are taken")
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


def _metrics_bind(settings: Settings, listeners: Listeners, events: Bind, port_serves: bool) -> Bind | None:
    """Where /metrics, /healthz and /readyz listen: FOLIO_METRICS_PORT (or its socket, listening already); None when
    it is unset, or is PORT and the site there (`events`, when `port_serves`) serves them."""
    if listeners.metrics is None:
        metrics_port = settings.folio_metrics_port
        if metrics_port is None or (metrics_port == events.port and port_serves):
            return None
    else:
        metrics_port = 0
    return Bind(
        host=events.host,
        port=metrics_port,
        sock=listeners.metrics,
        shared=events.shared,
        setting="FOLIO_METRICS_PORT",
    )


@asynccontextmanager
async def _metrics_site(bind: Bind | None, ready: ReadyCheck) -> AsyncIterator[None]:
    """/metrics, /healthz and /readyz where `bind` says (nothing when None)."""
    if bind is None:
        yield
        return
    application = web.Application()
    application.add_routes(ops_routes(ready))
    async with running_site(application, bind, announce="Folio serves /metrics, /healthz and /readyz on {url}"):
        yield


def _agents_site(
    routes: list[web.RouteDef], bind: Bind, *, started: Callable[[int], None] | None, ready: ReadyCheck
) -> AbstractAsyncContextManager[Listening]:
    """In Socket Mode: /mcp (and the document links) with /healthz, /readyz and /metrics on PORT."""
    application = web.Application()
    application.add_routes(routes)
    application.add_routes(ops_routes(ready))
    return running_site(application, bind, announce="Folio serves agents (MCP) on {url}/mcp", started=started)


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
