"""The one wiring function of the Slack side: `build_app(...)`, plus the HTTP endpoint that serves it.

Clients are passed in; listeners receive them through a `Folio` value and never read globals or the environment.
"""

from __future__ import annotations

import logging

import aiohttp
from aiohttp import web
from openai import AsyncOpenAI
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.agent import AgentOptions
from bot.config import ChannelPolicy, Settings
from bot.errors import ConfigurationError
from bot.retrieval import Retriever
from bot.slack.documents import DocumentServer
from bot.slack.listeners import register
from bot.slack.site import health
from bot.slack.tasks import BackgroundTasks
from bot.slack.turns import Folio
from bot.store import ConversationStore

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
SLACK_CALL_TIMEOUT = 30  # seconds, slack_sdk's own default for one Web API call


def slack_http_session() -> aiohttp.ClientSession:
    """The one HTTP session every Web API call goes through; open it in a running loop, close it on shutdown.

    Without it slack_sdk opens a new session, and so a new connection, for every call.
    """
    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=SLACK_CALL_TIMEOUT))


def build_slack_client(settings: Settings, session: aiohttp.ClientSession) -> AsyncWebClient:
    """The Web API client on SLACK_API_URL, retrying rate limits (HTTP 429 after Retry-After) and dropped connections.

    slack_sdk retries only connection errors by default, so the rate-limit handler is added here. The session's
    pooled connections are reused across calls; a kept-alive connection the server closed meanwhile is a
    connection error, retried once on a new connection.
    """
    if settings.slack_bot_token is None:
        raise ConfigurationError("SLACK_BOT_TOKEN is not set. Copy the Bot User OAuth Token (xoxb-...) into .env.")
    retries: list[AsyncRetryHandler] = [
        AsyncConnectionErrorRetryHandler(max_retry_count=1),
        AsyncRateLimitErrorRetryHandler(max_retry_count=3),
    ]
    return AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url, retry_handlers=retries,
        session=session, timeout=SLACK_CALL_TIMEOUT,
    )  # fmt: skip


def build_app(
    settings: Settings,
    *,
    session: aiohttp.ClientSession,
    model: AsyncOpenAI | None,
    retriever: Retriever,
    store: ConversationStore,
    policy: ChannelPolicy,
    options: AgentOptions,
    tasks: BackgroundTasks | None = None,
) -> AsyncApp:
    """The Bolt app with every listener attached; HTTP requests are verified with SLACK_SIGNING_SECRET.

    `session` (see `slack_http_session`) carries every Web API call; the caller closes it after the app stops.
    """
    socket_mode = settings.slack_app_token is not None
    if not socket_mode and settings.slack_signing_secret is None:
        raise ConfigurationError(
            "SLACK_SIGNING_SECRET is not set. Copy the Signing Secret from your app's Basic Information page, "
            "or set SLACK_APP_TOKEN to use Socket Mode."
        )
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    app = AsyncApp(
        client=build_slack_client(settings, session),
        signing_secret=secret,
        request_verification_enabled=not socket_mode,
        process_before_response=True,  # listeners only enqueue work; the ack waits for the place in line
        name="folio",
        logger=logging.getLogger("folio.slack"),
    )
    folio = Folio(
        model=model, retriever=retriever, store=store, policy=policy, options=options,
        tasks=tasks if tasks is not None else BackgroundTasks(), turn_timeout=settings.folio_turn_timeout,
    )  # fmt: skip
    register(app, folio)
    return app


def web_app(app: AsyncApp, *, documents: DocumentServer | None = None) -> web.Application:
    """An aiohttp application serving Slack's requests on POST /slack/events (and GET /healthz), and signed
    document links on GET /documents/... when `documents` is given."""

    async def events(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await app.async_dispatch(await to_bolt_request(request)))

    application = web.Application()
    application.router.add_post(EVENTS_PATH, events)
    application.router.add_get("/healthz", health)
    if documents is not None:
        documents.add_routes(application)
    return application
