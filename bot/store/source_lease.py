"""Who syncs a source now: a lease in Redis, so two `folio sync` processes (two replicas, a CronJob overlapping a
Deployment, an operator's run beside the service) never work one source at once.

    {prefix}:sync:{source}    the holder's random token, with a lease of LEASE_SECONDS renewed every third of it

Taken with SET NX PX; renewed and released only by the token that holds it (a script compares first), so a holder
that was paused past its lease cannot extend or free a newer holder's. A holder that cannot renew is told through
`lost`, and stops after the file it is on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from bot.errors import StoreUnavailable
from bot.store.failures import REDIS_FAILURES, store_failure
from bot.store.lease import renew_every
from bot.store.scripts import Script

log = logging.getLogger(__name__)

LEASE_SECONDS = 60.0
_RENEW = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
""")
_RELEASE = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
""")


@contextlib.asynccontextmanager
async def source_lease(
    redis: Redis | RedisCluster, prefix: str, source: str, *, lost: asyncio.Event, lease: float = LEASE_SECONDS
) -> AsyncIterator[bool]:
    """Hold `source`'s lease while the block runs: yields False (and holds nothing) when another process holds it.
    `lost` is set when the lease could not be renewed."""
    key, token, millis = f"{prefix}:sync:{source}", secrets.token_hex(16), int(lease * 1000)
    try:
        taken = bool(await redis.set(key, token, nx=True, px=millis))
    except REDIS_FAILURES as exc:
        raise StoreUnavailable(store_failure(exc)) from exc
    if not taken:
        yield False
        return
    renewing = asyncio.create_task(_renew(redis, key, token, millis, lost))
    try:
        yield True
    finally:
        renewing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewing
        try:
            await _RELEASE(redis, (key,), (token,))
        except REDIS_FAILURES as exc:  # it lapses by itself within one lease
            log.warning("could not release the sync lease of %s: %s", source, store_failure(exc))


async def _renew(redis: Redis | RedisCluster, key: str, token: str, millis: int, lost: asyncio.Event) -> None:
    failed = 0
    while True:
        await asyncio.sleep(renew_every(millis / 1000))  # the one lease rule (bot.store.lease)
        try:
            held, failed = await _RENEW(redis, (key,), (token, millis)), 0
        except REDIS_FAILURES as exc:  # tried again in a third of a lease; twice failed, the lease may lapse
            log.warning("could not renew the sync lease %s: %s", key, store_failure(exc))
            failed += 1
            held = failed < 2
        if not held:
            log.error("the sync lease %s was lost: stopping after the current file", key)
            lost.set()
            return
