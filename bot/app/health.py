"""Is this process ready to answer? What `/readyz` reports: Redis answers, the index opens, the embedded Redis runs,
Slack answered (`folio serve` starts while Slack is unreachable and keeps trying), the process is not stopping.

`/healthz` only says the process is alive; a load balancer or Docker uses `/readyz` to stop sending work to a process
whose dependencies fail, so that it never looks healthy while every turn fails.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import aiohttp

from bot import messages
from bot.app import Folio
from bot.app.redis_client import RedisOptions
from bot.config import Settings
from bot.errors import FolioError

CHECK_TIMEOUT = 2.0  # seconds each dependency may take: a probe must answer before the prober gives up
PROBE_CONTAINER = "__folio_readyz__"  # counting a container that does not exist still opens the index

ReadyCheck = Callable[[], Awaitable[list[str]]]


class Readiness:
    """`folio serve`'s /readyz: its dependencies, whether Slack has answered yet, and whether it is stopping.

    A ReadyCheck (call it for what is wrong). `serve` sets `slack` while Slack cannot be reached and `stopping` on
    SIGTERM, first of all, so that a load balancer stops sending events before the listener closes."""

    def __init__(self, folio: Folio) -> None:
        self._check = readiness(folio)
        self.slack: str | None = messages.SLACK_NOT_ASKED_YET  # why Slack cannot be reached, while it cannot
        self.stopping = False

    async def __call__(self) -> list[str]:
        if self.stopping:
            return [messages.STOPPING_NOT_READY]
        problems = [f"Slack: {self.slack}"] if self.slack is not None else []
        return problems + await self._check()


def readiness(folio: Folio) -> ReadyCheck:
    """A check of `folio`'s dependencies, returning what is wrong (nothing when ready)."""

    async def check() -> list[str]:
        problems = []
        server = folio.redis_server
        if server is not None and server.gave_up.is_set():
            problems.append("the embedded Redis kept dying and is not restarted any more")
        if folio.store is not None:
            problems += await _problem(redis_part(folio.settings), folio.store.ping())
        problems += await _problem("index", folio.retriever.count(PROBE_CONTAINER))
        return problems

    return check


def redis_part(settings: Settings) -> str:
    """The part's name: "Redis", with its mode when it is not a plain single server: "Redis (cluster, TLS)"."""
    if settings.redis_url is None:
        return "Redis"
    mode = RedisOptions.of(settings).describe(settings.redis_url)
    return "Redis" if mode == "single server" else f"Redis ({mode})"


async def _problem(part: str, probe: Awaitable[object]) -> list[str]:
    try:
        await asyncio.wait_for(probe, CHECK_TIMEOUT)
    except TimeoutError:
        return [f"{part}: no answer within {CHECK_TIMEOUT:.0f} s"]
    except (FolioError, OSError) as exc:
        return [f"{part}: {exc}"]
    return []


def unreachable(exc: BaseException, *, service: str, url: str, setting: str) -> str:
    """Why `url` could not be reached, as one line naming the real cause and its fix (see `unreachable_parts`)."""
    summary, fix = unreachable_parts(exc, service=service, url=url, setting=setting)
    return f"{summary}. {fix}."


def unreachable_parts(exc: BaseException, *, service: str, url: str, setting: str) -> tuple[str, str]:
    """What happened and what to do, by the real cause: a name that does not resolve (DNS, not the URL, unless it
    was changed), a refused connection, a TLS handshake that failed, no answer in time."""
    host = urlsplit(url).hostname if _cause(exc) == "dns" else urlsplit(url).netloc
    detail = str(getattr(exc, "os_error", None) or exc) or type(exc).__name__
    return messages.unreachable(service, url=url, setting=setting, host=host or url, cause=_cause(exc), detail=detail)


def _cause(exc: BaseException) -> str:
    """dns, tls, refused, timeout or other, from the client's exception (aiohttp wraps the OS error)."""
    os_error = getattr(exc, "os_error", None)
    if isinstance(exc, (aiohttp.ClientSSLError, ssl.SSLError)):  # before DNS: both are connector errors
        return "tls"
    if isinstance(exc, aiohttp.ClientConnectorDNSError) or isinstance(os_error, socket.gaierror):
        return "dns"
    if isinstance(exc, ConnectionRefusedError) or isinstance(os_error, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, (TimeoutError, aiohttp.ServerTimeoutError)):
        return "timeout"
    return "other"
