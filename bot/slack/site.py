"""Runs an aiohttp application on host:port for the length of a block, and says where it listens."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from aiohttp import web


async def health(request: web.Request) -> web.Response:
    """GET /healthz: the process is up and serving."""
    return web.Response(text="ok")


@asynccontextmanager
async def running_site(
    application: web.Application, host: str, port: int, *, announce: str, started: Callable[[int], None] | None = None
) -> AsyncIterator[int]:
    """Listen while the block runs; `announce` gets `{url}` (with the bound port) and goes to stderr."""
    runner = web.AppRunner(application, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound = runner.addresses[0][1]
        print(announce.format(url=f"http://{host}:{bound}"), file=sys.stderr, flush=True)
        if started is not None:
            started(bound)  # port 0 in tests: the caller learns which port it got
        yield bound
    finally:
        await runner.cleanup()
