"""Listening sockets opened first thing, before the slow parts of a start (imports, Redis, the index, Slack), so that
a restarting Folio takes connections at once: the kernel queues them (up to BACKLOG) until the HTTP server accepts.

    sock = listening_socket("0.0.0.0", 3000, setting="PORT")   # bound and listening; ConfigurationError if not
    ... web.SockSite(runner, sock) later, in this process or in a worker that inherited the socket

`folio serve --workers N` opens its sockets in the parent and hands them to every worker (one queue of connections
for all of them): a worker that dies takes only the requests it was answering; what waited in the queue is accepted by
another worker, and the port stays open while the parent runs, even while every worker is being replaced.
"""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass

from bot.config import Settings
from bot.errors import ConfigurationError

EVENTS_PATH = "/slack/events"  # where Slack posts events (bot.slack.app serves it; named here, light to import)
BACKLOG = 1024  # connections the kernel holds until a worker accepts them (a start, a replacement, a busy loop)


@dataclass(frozen=True)
class Listeners:
    """The sockets `folio serve` listens on, opened first (or inherited from `--workers N`'s parent): PORT's (Slack's
    events over HTTP, signed document links) and FOLIO_METRICS_PORT's; None where nothing listens."""

    events: socket.socket | None = None
    metrics: socket.socket | None = None

    @classmethod
    def open(cls, settings: Settings, *, host: str, port: int) -> Listeners:
        """Listen on PORT when something serves there, and on FOLIO_METRICS_PORT when it is another port."""
        events = listening_socket(host, port, setting="PORT") if serves_port(settings) else None
        metrics_port = settings.folio_metrics_port
        if metrics_port is None or (metrics_port == port and events is not None):
            return cls(events, None)
        try:
            return cls(events, listening_socket(host, metrics_port, setting="FOLIO_METRICS_PORT"))
        except ConfigurationError:
            if events is not None:
                events.close()
            raise

    @classmethod
    def inherited(cls, fds: str) -> Listeners:
        """The sockets a worker's parent passed it, as `--listen-fds` says them ("EVENTS,METRICS", "-" for none)."""
        events, metrics = (None if fd == "-" else socket.socket(fileno=int(fd)) for fd in fds.split(","))
        return cls(events, metrics)

    def fds(self) -> tuple[int, ...]:
        return tuple(sock.fileno() for sock in (self.events, self.metrics) if sock is not None)

    def describe(self) -> str:
        """What `--listen-fds` carries to a worker."""
        return ",".join("-" if sock is None else str(sock.fileno()) for sock in (self.events, self.metrics))

    def port(self, default: int) -> int:
        """The port the events socket got (port 0 became a free one), else `default`."""
        return int(self.events.getsockname()[1]) if self.events is not None else default

    def close(self) -> None:
        for sock in (self.events, self.metrics):
            if sock is not None:
                sock.close()


def serves_port(settings: Settings) -> bool:
    """Whether Folio listens on PORT: for Slack's events over HTTP, or for signed document links."""
    return settings.slack_app_token is None or settings.folio_public_url is not None


def listening_socket(host: str, port: int, *, setting: str) -> socket.socket:
    """A socket bound to host:port and listening; port 0 becomes a free port (`getsockname()` says which).

    SO_REUSEADDR as every listener has it (aiohttp's too): without it a connection of a stopped Folio still in
    TIME-WAIT (~60 s after a keep-alive connection or a /readyz probe) made a free port look "in use"."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        # One socket: a name with both (localhost) gets its IPv4 address, where Slack's proxies and probes connect.
        family, _, _, _, address = next((info for info in found if info[0] == socket.AF_INET), found[0])
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise port_refused(exc, host, port, setting) from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # "::" is IPv6 only, as asyncio's servers are
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise port_refused(exc, host, port, setting) from exc
    return sock


def port_refused(exc: OSError, host: str, port: int, setting: str) -> ConfigurationError:
    """The one line a port that cannot be had ends Folio with, naming the setting to change (or the host: a name
    that does not resolve, or an address of another machine, is no fault of the port)."""
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return ConfigurationError(
            f"Cannot listen on {host} ({exc.strerror or exc}): set --host to an address of this machine, "
            "or leave it out to listen on all of them."
        )
    why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be used ({exc.strerror or exc})"
    return ConfigurationError(f"Port {port} on {host} {why}: set {setting} to a free port.")
