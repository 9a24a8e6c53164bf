"""The Redis client for REDIS_URL: one server, or a Redis Cluster (REDIS_CLUSTER=true); plain or TLS (rediss://).

    client = redis_client(url, RedisOptions.of(settings))

A cluster client (redis-py's `redis.asyncio.cluster.RedisCluster`) asks the node in REDIS_URL for the cluster's
layout (CLUSTER SLOTS) and sends each command to the node of its key's slot, following MOVED and ASK as slots move.
Its pipelines send to every node at once; its MULTI/EXEC must stay in one slot, which every Folio transaction does
(bot.store.keys: a thread's keys share the thread's hash tag).

TLS: `rediss://` verifies the server's certificate against the system's CAs, or REDIS_TLS_CA_FILE; only
REDIS_TLS_VERIFY=false turns the check off (a warning says so at start, and doctor says "TLS without certificate
check"). redis-py lets URL query options (`?ssl_cert_reqs=none`) override the arguments given beside the URL, so a
URL naming any `ssl_*` option is refused: the check cannot be off while doctor says "TLS".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from bot import messages
from bot.config import Settings
from bot.errors import ConfigurationError

if TYPE_CHECKING:
    from redis import Redis as SyncRedis
    from redis.asyncio import Redis
    from redis.asyncio.cluster import RedisCluster

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 256  # per server (per node, on a cluster): see `redis_client`


@dataclass(frozen=True)
class RedisOptions:
    """How to talk to REDIS_URL: as a cluster or not, and how to check its TLS certificate."""

    cluster: bool = False
    ca_file: Path | None = None
    verify: bool = True

    @classmethod
    def of(cls, settings: Settings) -> RedisOptions:
        return cls(settings.redis_cluster, settings.redis_tls_ca_file, settings.redis_tls_verify)

    def describe(self, url: str) -> str:
        """What doctor and /readyz say of the mode: `cluster, TLS` and the like."""
        tls = urlsplit(url).scheme == "rediss"
        parts = ["cluster" if self.cluster else "single server"]
        if tls:
            parts.append("TLS" if self.verify else "TLS without certificate check")
        return ", ".join(parts)


def redis_client(url: str, options: RedisOptions = RedisOptions()) -> Redis | RedisCluster:
    """A client whose pool waits for a free connection under load instead of failing (redis-py's default pool
    raises MaxConnectionsError past 100), with short timeouts: listeners use Redis before Slack's 3-second ack.

    A command holds its connection until the event loop gets round to its reply, so a busy loop holds many at once:
    64 ran dry at 200 bench threads (waits past 2 s, "No connection available"); Redis serves thousands.

    After Redis restarts, every pooled connection is dead. A pool built from a URL has no retry (redis-py gives the
    `Redis(...)` constructor's default retry only to connections it builds itself), so each old connection failed
    one more command ("store down" 11 s after recovery). One retry on a connection error reconnects at once; more
    would hold a listener past Slack's 3-second ack while Redis is really down."""
    from redis.asyncio import BlockingConnectionPool, Redis
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import RedisClusterException

    retry = Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
    common: dict[str, Any] = {
        "socket_connect_timeout": 1.0,
        "socket_timeout": 2.0,
        "retry": retry,
        **_tls(url, options),
    }
    if options.cluster:
        from redis.asyncio.cluster import RedisCluster

        try:  # the cluster client's connections per node do not wait: MaxConnectionsError past the limit
            return RedisCluster.from_url(url, max_connections=MAX_CONNECTIONS, **common)
        except (ValueError, RedisClusterException) as exc:
            raise ConfigurationError(messages.redis_cluster_refused(str(exc))) from exc
    try:
        pool = BlockingConnectionPool.from_url(url, max_connections=MAX_CONNECTIONS, timeout=2.0, **common)
    except ValueError as exc:  # no scheme, a bad port: redis-py says what; the operator needs the variable too
        raise ConfigurationError(f"REDIS_URL is not a Redis URL ({exc}). Use redis://HOST:6379/0.") from exc
    return Redis.from_pool(pool)


def blocking_client(url: str, options: RedisOptions = RedisOptions()) -> SyncRedis | None:
    """The same Redis through redis-py's blocking client, with `redis_client`'s timeouts, reconnect and TLS: for the
    one round trip before Slack's ack (`ConversationStore.accept`), which an awaiting client makes wait for a busy
    event loop. Used by one thread at a time: one connection. None on a cluster: redis-py's blocking cluster
    pipeline takes no scripts (its `eval` refuses), so the accept awaits there as before."""
    if options.cluster:
        return None
    from redis import Redis as SyncRedis
    from redis.backoff import NoBackoff
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.retry import Retry

    retry = Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
    return SyncRedis.from_url(url, socket_connect_timeout=1.0, socket_timeout=2.0, retry=retry, **_tls(url, options))


def _tls(url: str, options: RedisOptions) -> dict[str, Any]:
    """redis-py's TLS arguments for a `rediss://` URL (none for any other: a plain connection takes none);
    ConfigurationError for a URL whose query would override them."""
    named = sorted(name for name in parse_qs(urlsplit(url).query) if name.lower().startswith("ssl"))
    if named:
        raise ConfigurationError(messages.redis_tls_in_url(named))
    if urlsplit(url).scheme != "rediss":
        return {}
    if not options.verify:
        return {"ssl_cert_reqs": "none", "ssl_check_hostname": False}
    tls: dict[str, Any] = {"ssl_cert_reqs": "required", "ssl_check_hostname": True}
    if options.ca_file is not None:
        tls["ssl_ca_certs"] = str(options.ca_file)
    return tls
