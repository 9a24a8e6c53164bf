"""Stateless Streamable HTTP: two `folio serve` replicas behind one URL (a round-robin proxy, as a load balancer
without sticky sessions) both answer one agent's requests, initialisation on one and the tool call on the other."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import aiohttp
import pytest
from aiohttp import web

from tests.fakes.jwks import FakeIdentityProvider
from tests.mcp_server.conftest import agent, serving

pytestmark = pytest.mark.usefixtures("environment")
HOP_BY_HOP = {"host", "content-length", "transfer-encoding", "connection"}


@asynccontextmanager
async def round_robin(ports: list[int]) -> AsyncIterator[tuple[str, Counter[int]]]:
    """A proxy on 127.0.0.1 sending each request to the next of `ports`; yields its URL and requests per port."""
    served: Counter[int] = Counter()
    turn = itertools.cycle(ports)
    session = aiohttp.ClientSession(auto_decompress=False)

    async def forward(request: web.Request) -> web.Response:
        port = next(turn)
        served[port] += 1
        headers = {name: value for name, value in request.headers.items() if name.lower() not in HOP_BY_HOP}
        async with session.request(
            request.method, f"http://127.0.0.1:{port}{request.path_qs}", headers=headers, data=await request.read()
        ) as upstream:
            body = await upstream.read()
            kept = {name: value for name, value in upstream.headers.items() if name.lower() not in HOP_BY_HOP}
            return web.Response(status=upstream.status, body=body, headers=kept)

    application = web.Application()
    application.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(application)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/mcp", served
    finally:
        await runner.cleanup()
        await session.close()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_replicas_behind_one_url_both_answer(idp: FakeIdentityProvider, mode: str) -> None:
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(serving())
        second = await stack.enter_async_context(serving())
        url, served = await stack.enter_async_context(round_robin([first.port, second.port]))
        async with agent(url, idp.token("ana@example.com"), mode=mode) as client:
            listed = await client.list_tools()
            found = [await client.call_tool("search_documents", {"query": "refund window"}) for _ in range(2)]
    assert {tool.name for tool in listed.tools} == {"search_documents", "read_page", "ask"}
    assert all(not result.is_error and result.structured_content["passages"] for result in found)
    assert served[first.port] >= 2 and served[second.port] >= 2  # every other request went to each replica
