"""The one wiring function of the Slack side: `build_app(folio)`, plus the HTTP endpoint that serves it.

Listeners receive the `Folio` that `bot.app.open_folio` built and never read globals or the environment.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped

from bot.app import Folio
from bot.app.slack_calls import PacedWebClient
from bot.errors import ConfigurationError
from bot.ports import EVENTS_PATH
from bot.slack.door import give_up
from bot.slack.listeners import register
from bot.slack.middleware import Deliveries, PacedPosts
from bot.slack.services import SlackFolio
from bot.slack.site import ReadyCheck, ops_routes
from bot.slack.turns import run_slack_turn
from bot.turns import TurnRequest
from bot.turns.consumer import Attempt, Consumer
from bot.turns.thread_files import sweep_quietly
from bot.turns.watch_post import post_quietly

log = logging.getLogger(__name__)

__all__ = ["EVENTS_PATH", "build_app", "web_app"]  # EVENTS_PATH: bot.ports names it, light to import


class _TokenNote(logging.Filter):
    """Drops Bolt's "`token` will be unused": Bolt reads SLACK_BOT_TOKEN from the environment by itself, and so
    says it on every start where the token is set there (Docker, compose, systemd), though the client Folio hands
    it was built from that very token. Nothing in it for an operator to act on."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


def _bolt_log() -> logging.Logger:
    """Bolt's logger, with the token note filtered out (added once, when the first app is built)."""
    logger = logging.getLogger("folio.slack")
    if not any(isinstance(each, _TokenNote) for each in logger.filters):
        logger.addFilter(_TokenNote())
    return logger


def serving(folio: Folio) -> SlackFolio:
    """`folio` as a SlackFolio, its turn consumer wired to `run_slack_turn`; ConfigurationError naming what is
    missing (the token, the policy file)."""
    if isinstance(folio, SlackFolio):
        return folio
    if folio.slack is None or folio.store is None or folio.access is None:
        raise ConfigurationError("SLACK_BOT_TOKEN is not set. Copy the Bot User OAuth Token (xoxb-...) into .env.")
    if folio.policy is None:  # a missing policy file stops Folio at start, with what to do
        raise folio.no_policy()
    if folio.stores is None or folio.budget is None:  # open_folio builds them with the store
        raise ConfigurationError("The stores beside the conversations were not built: open Folio with open_folio.")

    def run(request: TurnRequest, attempt: Attempt) -> Awaitable[None]:
        return run_slack_turn(served, request, attempt)

    def stop(request: TurnRequest, shown_ts: str | None) -> Awaitable[None]:
        return give_up(served, request, shown_ts)

    consumer = Consumer(store=folio.store, tasks=folio.tasks, run=run, give_up=stop)
    parts = {each.name: getattr(folio, each.name) for each in dataclasses.fields(Folio)}
    served = SlackFolio(
        **{
            **parts,
            "store": folio.store,
            "slack": folio.slack,
            "access": folio.access,
            "policy": folio.policy,
            "stores": folio.stores,
            "budget": folio.budget,
        },
        consumer=consumer,
    )
    return served


def build_app(folio: Folio) -> AsyncApp:
    """The Bolt app with its middleware and every listener attached; HTTP requests are verified with
    SLACK_SIGNING_SECRET (Socket Mode needs no signature). ConfigurationError, saying what to set, when `folio`
    lacks what serving Slack needs (see `serving`)."""
    folio = serving(folio)
    settings = folio.settings
    socket_mode = settings.slack_app_token is not None
    if not socket_mode and settings.slack_signing_secret is None:
        raise ConfigurationError(
            "SLACK_SIGNING_SECRET is not set. Copy the Signing Secret from your app's Basic Information page, "
            "or set SLACK_APP_TOKEN to use Socket Mode."
        )
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    app = AsyncApp(
        client=folio.slack,
        signing_secret=secret,
        request_verification_enabled=not socket_mode,
        process_before_response=True,  # listeners only enqueue work; the ack waits for the place in line
        name="folio",
        logger=_bolt_log(),
    )
    app.use(Deliveries(folio.store))
    if isinstance(folio.slack, PacedWebClient):
        app.use(PacedPosts(folio.slack))
    register(app, folio)
    folio.consumer.start()  # claims the turns of workers that died (bot.turns.consumer)
    if settings.folio_thread_files:  # files shared in threads past FOLIO_THREAD_FILE_DAYS (and at each share)
        folio.tasks.spawn(
            sweep_quietly(folio.retriever, folio.documents, days=settings.folio_thread_file_days),
            name="thread files sweep",
        )
    folio.tasks.spawn(post_quietly(folio.store, folio.slack), name="watch notes left waiting")
    return app


def web_app(app: AsyncApp, *extra: web.RouteDef, ready: ReadyCheck | None = None) -> web.Application:
    """An aiohttp application serving Slack's requests on POST /slack/events, GET /healthz, /metrics, /readyz (when
    `ready` is given) and `extra` routes (the signed document links, when Folio serves them)."""

    async def events(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await app.async_dispatch(await to_bolt_request(request)))

    application = web.Application()
    application.router.add_post(EVENTS_PATH, events)
    application.add_routes(ops_routes(ready))
    application.add_routes(extra)
    return application
