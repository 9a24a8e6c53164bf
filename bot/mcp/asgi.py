"""The MCP SDK's Streamable HTTP app (Starlette, ASGI) served by Folio's aiohttp server, on the same port as Slack's
events, the health checks and the document links.

    routes = asgi_routes(app, paths=("/mcp", "/.well-known/oauth-protected-resource/mcp"), max_body=...)

One aiohttp request becomes one ASGI `http` call: the body is read whole (bounded by `max_body`: a request over it is
413 before the SDK sees it), the response is streamed back as the app sends it (server-sent events included). When
the client goes away, the app hears `http.disconnect`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from aiohttp import web
from starlette.types import ASGIApp, Message

log = logging.getLogger(__name__)

ASGI_VERSION = {"version": "3.0", "spec_version": "2.3"}


def asgi_routes(app: ASGIApp, *, paths: Iterable[str], max_body: int) -> list[web.RouteDef]:
    """aiohttp routes (any method) that hand each request on `paths` to `app`."""

    async def handle(request: web.Request) -> web.StreamResponse:
        return await call_asgi(app, request, max_body=max_body)

    return [web.route("*", path, handle) for path in paths]


async def call_asgi(app: ASGIApp, request: web.Request, *, max_body: int) -> web.StreamResponse:
    """Run `app` on `request` and return what it answered."""
    if request.content_length is not None and request.content_length > max_body:
        return web.Response(status=413, text=f"request body over {max_body} bytes\n")
    body = await _read(request, max_body)
    if body is None:
        return web.Response(status=413, text=f"request body over {max_body} bytes\n")
    exchange = _Exchange(request, body)
    try:
        await app(_scope(request), exchange.receive, exchange.send)
    except Exception:  # Starlette answers an error (500, or the app's handler) before it raises it again
        if not exchange.started:
            raise
        log.warning("the MCP app failed after answering %s", request.path, exc_info=True)
    return await exchange.finish()


async def _read(request: web.Request, limit: int) -> bytes | None:
    chunks, size = [], 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _scope(request: web.Request) -> dict[str, Any]:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    host, port = (peer[0], peer[1]) if isinstance(peer, tuple) and len(peer) >= 2 else ("", 0)
    return {
        "type": "http",
        "asgi": ASGI_VERSION,
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": (host, port),
        "server": (request.host.split(":")[0], 0),
        "state": {},
    }


class _Exchange:
    """The two ASGI channels of one request: the body in, the response out (started on its first message)."""

    def __init__(self, request: web.Request, body: bytes) -> None:
        self._request = request
        self._body: bytes | None = body
        self._response: web.StreamResponse | None = None
        self._done = asyncio.Event()

    async def receive(self) -> Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._done.wait()  # nothing more to read: the app hears the end of the exchange
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in message["headers"]]
            response = web.StreamResponse(status=message["status"])
            for name, value in headers:
                response.headers.add(name, value)
            self._response = response
            await response.prepare(self._request)
        elif message["type"] == "http.response.body" and self._response is not None:
            await self._response.write(message.get("body", b""))
            if not message.get("more_body", False):
                await self._response.write_eof()
                self._done.set()

    @property
    def started(self) -> bool:
        return self._response is not None

    async def finish(self) -> web.StreamResponse:
        self._done.set()
        if self._response is None:  # the app answered nothing: say so rather than hang
            return web.Response(status=500, text="no response\n")
        return self._response
