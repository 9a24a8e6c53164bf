"""Is a plain client on a Redis Cluster node? It answers PING there, and then MOVED for most keys.

INFO says `cluster_enabled:1` on a node of a Redis Cluster; a proxy in front of one (Azure Managed Redis's Enterprise
clustering policy) routes keys itself, so the proof is a read of keys in several slots: a MOVED among them means the
keys live on other nodes and REDIS_CLUSTER=true is needed.
"""

from __future__ import annotations

from redis.asyncio import Redis
from redis.exceptions import MovedError

_PROBES = 16  # keys in 16 slots: on a cluster of two or more shards, one of them is elsewhere all but surely


async def needs_cluster_client(redis: Redis) -> bool:
    """True when `redis` (a plain client) is connected to a node that sends most keys elsewhere (MOVED)."""
    if str((await redis.info("cluster")).get("cluster_enabled")) != "1":
        return False
    async with redis.pipeline(transaction=False) as pipe:
        for n in range(_PROBES):
            pipe.exists(f"folio:probe:{{{n}}}")
        answers = await pipe.execute(raise_on_error=False)
    return any(isinstance(answer, MovedError) for answer in answers)
