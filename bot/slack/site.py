"""Runs an aiohttp application on host:port for the length of a block, and says where it listens; the routes every
Folio HTTP server has: GET /healthz (alive), /readyz (ready to answer: 503 and what is wrong otherwise), /metrics."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web

from bot import logs, metrics
from bot.app.health import ReadyCheck
from bot.ports import port_refused


async def health(request: web.Request) -> web.Response:
    """GET /healthz: the process is up and serving."""
    return web.Response(text="ok")


async def prometheus(request: web.Request) -> web.Response:
    """GET /metrics: Prometheus' text format."""
    body, content_type = metrics.exposition()
    return web.Response(body=body, headers={"Content-Type": content_type})


def readyz(ready: ReadyCheck) -> Callable[[web.Request], Awaitable[web.Response]]:
    """GET /readyz: 200 "ready", or 503 with one line per problem."""

    async def handle(request: web.Request) -> web.Response:
        problems = await ready()
        if problems:
            return web.Response(status=503, text="\n".join(problems) + "\n")
        return web.Response(text="ready")

    return handle


def ops_routes(ready: ReadyCheck | None = None) -> list[web.RouteDef]:
    """/healthz and /metrics, and /readyz when there is something to check."""
    routes = [web.get("/healthz", health), web.get("/metrics", prometheus)]
    if ready is not None:
        routes.append(web.get("/readyz", readyz(ready)))
    return routes


@dataclass(frozen=True)
class Listening:
    """A running site: the port it got, and how to stop it taking requests before it closes (a drain)."""

    port: int
    runner: web.AppRunner

    async def stop_taking(self) -> None:
        """Stop accepting connections and close kept-alive ones once their request in progress is answered; the
        runner's cleanup at the end of `running_site` closes the rest."""
        for site in list(self.runner.sites):
            await site.stop()
        if self.runner.server is not None:
            self.runner.server.pre_shutdown()


@dataclass(frozen=True, kw_only=True)
class Bind:
    """Where a site listens: host:port (port 0: any free one), or `sock`, a socket already listening there (bot.ports,
    opened before the slow parts of the start, or inherited from `folio serve --workers N`'s parent). `shared`: one
    of several workers on the port, which announce nothing (and, without a socket, bind with SO_REUSEPORT, so the
    kernel spreads connections between processes). A port that cannot be had is a ConfigurationError naming
    `setting`."""

    host: str
    port: int
    sock: socket.socket | None = None
    shared: bool = False
    setting: str = "PORT"


@asynccontextmanager
async def running_site(
    application: web.Application, bind: Bind, *, announce: str, started: Callable[[int], None] | None = None
) -> AsyncIterator[Listening]:
    """Listen while the block runs; `announce` gets `{url}` (with the bound port) and goes to stderr, unless the
    site is `shared`; `started` hears the port it got (port 0 in tests: the caller learns which)."""
    runner = web.AppRunner(application, access_log=None)
    await runner.setup()
    host, port = bind.host, bind.port
    try:
        try:
            if bind.sock is not None:
                await web.SockSite(runner, bind.sock).start()
            else:
                await web.TCPSite(runner, host, port, reuse_port=bind.shared or None).start()
        except OSError as exc:
            raise port_refused(exc, host, port, bind.setting) from exc
        bound = runner.addresses[0][1]
        if not bind.shared:
            logs.say(announce.format(url=f"http://{host}:{bound}"))
        if started is not None:
            started(bound)  # port 0 in tests: the caller learns which port it got
        yield Listening(bound, runner)
    finally:
        await runner.cleanup()
