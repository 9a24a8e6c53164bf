"""The HTTP front: Slack's requests are taken on a thread of their own, so that a question's ack never waits for turns.

    async with front_site(folio, app, host, port, *extra_routes, ready=..., announce=...) as site:
        ...                                  # site.port; at a drain, `await site.stop_taking()`

Every turn runs on the turns' event loop (the one `folio serve` runs: model streams, searches, rendering, Slack
calls). A request served on that loop waits behind every running turn's next step at each await: with 30 turns at
once, the accept's one Redis round trip before the ack took 20-55 ms at p99 (benchmarks/RESULTS.md, issue 21 item 2).
Here a second event loop, in its own thread, runs the HTTP server. A person's message (an @mention, a DM, a reply in
a thread: the deliveries recorded before their ack) is verified, decided and recorded there, through a twin of the
conversation store on that loop's own Redis client (`Consumer.record`), and its turn handed to the turns' loop
(`Consumer.begin`). Everything else (other events, /ask, buttons, views, /healthz, /readyz, /metrics, document links)
runs on the turns' loop as before, Bolt's dispatch included; only its answer is sent from here.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.signature import SignatureVerifier

from bot.errors import StoreUnavailable
from bot.slack.app import EVENTS_PATH
from bot.slack.consumer import Taken
from bot.slack.listeners.messages import Asked, asked, store_down, taken_on
from bot.slack.middleware import LAST_RETRY, MESSAGE_EVENTS, from_a_person, message_delivery
from bot.slack.services import SlackFolio
from bot.slack.site import Listening, ReadyCheck, ops_routes, running_site
from bot.store import ConversationStore

log = logging.getLogger(__name__)

T = TypeVar("T")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class _LoopThread:
    """An event loop running in a thread of its own until `close()`."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on this thread's loop and wait for it here."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class Front:
    """The handlers of the front's HTTP server (they run on its loop)."""

    def __init__(self, folio: SlackFolio, app: AsyncApp, store: ConversationStore | None) -> None:
        self._folio = folio
        self._app = app
        self._turns = asyncio.get_running_loop()  # made on the turns' loop
        self._store = store  # the twin on the front's loop; None: every request goes to Bolt on the turns' loop
        secret = folio.settings.slack_signing_secret
        self._verifier = SignatureVerifier(secret.get_secret_value()) if secret else None
        self._bot_user: str | None = None

    def application(self, *extra: web.RouteDef, ready: ReadyCheck | None = None) -> web.Application:
        """POST /slack/events, and the other routes (GET /healthz, /metrics, /readyz, `extra`) run on the turns'
        loop."""
        application = web.Application()
        application.router.add_post(EVENTS_PATH, self.events)
        hopped = [web.RouteDef(each.method, each.path, self._on_turns_loop(each.handler), each.kwargs)
                  for each in (*ops_routes(ready), *extra)]  # fmt: skip
        application.add_routes(hopped)
        return application

    async def events(self, request: web.Request) -> web.Response:
        bolt_request = await to_bolt_request(request)
        response = await self._question(bolt_request) if self._store is not None else None
        if response is None:
            response = await self._turns_run(self._app.async_dispatch(bolt_request))
        return await to_aiohttp_response(response)

    async def _question(self, request: AsyncBoltRequest) -> BoltResponse | None:
        """A person's message, taken on here; None for anything else (and an unsigned request: Bolt refuses it)."""
        body = request.body
        event = body.get("event") or {}
        if body.get("type") != "event_callback" or event.get("type") not in MESSAGE_EVENTS or not self._signed(request):
            return None
        bot_user = await self._bot_user_id()
        if bot_user is None:  # Slack unreachable so far: Bolt's own authorization answers
            return None
        if not from_a_person(event, bot_user):
            return BoltResponse(status=200, body="")
        team = request.context.team_id or event.get("team") or "-"
        question = asked(event, team=team, bot_user_id=bot_user, delivery=message_delivery(team, event),
                         mentioned=event.get("type") == "app_mention")  # fmt: skip
        if question is None:
            return BoltResponse(status=200, body="")
        assert self._store is not None
        try:
            taken = await self._folio.consumer.record(question.request, new=question.new, reply=question.reply,
                                                      store=self._store)  # fmt: skip
        except StoreUnavailable as error:
            retry = int((request.headers.get("x-slack-retry-num") or ["0"])[0] or 0)
            self._turns.call_soon_threadsafe(self._store_down, question, retry, error)
            return BoltResponse(status=500 if retry < LAST_RETRY else 200, body="")  # 500: Slack delivers it again
        if taken is not None:
            self._turns.call_soon_threadsafe(self._begin, taken)
        return BoltResponse(status=200, body="")

    def _begin(self, taken: Taken) -> None:
        self._folio.consumer.begin(taken)
        taken_on(self._folio, self._folio.slack, taken.request)

    def _store_down(self, question: Asked, retry: int, error: StoreUnavailable) -> None:
        store_down(self._folio, self._folio.slack, question, retry=retry, error=error)

    def _signed(self, request: AsyncBoltRequest) -> bool:
        headers = request.headers
        timestamp = (headers.get("x-slack-request-timestamp") or [None])[0]
        signature = (headers.get("x-slack-signature") or [None])[0]
        try:
            return self._verifier is not None and self._verifier.is_valid(request.raw_body, timestamp, signature)
        except ValueError:  # a timestamp that is no number
            return False

    async def _bot_user_id(self) -> str | None:
        """Folio's own user id (auth.test, once, as Bolt's authorization learns it), or None while Slack cannot
        say."""
        if self._bot_user is None:
            try:
                found = await self._turns_run(self._folio.slack.auth_test())
            except Exception:  # Bolt's dispatch meets the same failure and answers for it
                return None
            self._bot_user = found.get("user_id")
        return self._bot_user

    def _on_turns_loop(self, handler: Handler) -> Handler:
        async def handle(request: web.Request) -> web.StreamResponse:
            return await self._turns_run(handler(request))

        return handle

    async def _turns_run(self, work: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._turns))


@dataclass(frozen=True)
class FrontSite:
    """The running front: the port it got, and how to stop it taking requests (a drain)."""

    port: int
    _listening: Listening
    _thread: _LoopThread

    async def stop_taking(self) -> None:
        await self._thread.run(self._listening.stop_taking())


@asynccontextmanager
async def front_site(
    folio: SlackFolio, app: AsyncApp, host: str, port: int, *extra: web.RouteDef, ready: ReadyCheck | None = None,
    announce: str | None, started: Callable[[int], None] | None = None, shared: bool = False,
) -> AsyncIterator[FrontSite]:  # fmt: skip
    """Serve Slack's HTTP requests on host:port from the front's thread while the block runs (see `running_site`
    for `announce`, `started`, `shared`)."""
    thread = _LoopThread("folio-http")
    store = folio.store.twin()
    try:
        front = Front(folio, app, store)
        site = running_site(front.application(*extra, ready=ready), host, port, announce=announce, started=started,
                            shared=shared)  # fmt: skip
        listening = await thread.run(site.__aenter__())
        try:
            yield FrontSite(listening.port, listening, thread)
        finally:
            await thread.run(site.__aexit__(None, None, None))
    finally:
        if store is not None:
            await thread.run(store.close())
        thread.close()
