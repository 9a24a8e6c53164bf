"""Is this process ready to answer? What `/readyz` reports: Redis answers, the index opens, the embedded Redis runs.

`/healthz` only says the process is alive; a load balancer or Docker uses `/readyz` to stop sending work to a process
whose dependencies fail, so that it never looks healthy while every turn fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from bot.app import Folio
from bot.errors import FolioError

CHECK_TIMEOUT = 2.0  # seconds each dependency may take: a probe must answer before the prober gives up
PROBE_CONTAINER = "__folio_readyz__"  # counting a container that does not exist still opens the index

ReadyCheck = Callable[[], Awaitable[list[str]]]


def readiness(folio: Folio) -> ReadyCheck:
    """A check of `folio`'s dependencies, returning what is wrong (nothing when ready)."""

    async def check() -> list[str]:
        problems = []
        server = folio.redis_server
        if server is not None and server.gave_up.is_set():
            problems.append("the embedded Redis kept dying and is not restarted any more")
        if folio.store is not None:
            problems += await _problem("Redis", folio.store.ping())
        problems += await _problem("index", folio.retriever.count(PROBE_CONTAINER))
        return problems

    return check


async def _problem(part: str, probe: Awaitable[object]) -> list[str]:
    try:
        await asyncio.wait_for(probe, CHECK_TIMEOUT)
    except TimeoutError:
        return [f"{part}: no answer within {CHECK_TIMEOUT:.0f} s"]
    except (FolioError, OSError) as exc:
        return [f"{part}: {exc}"]
    return []
