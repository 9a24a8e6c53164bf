"""Lua scripts run by their SHA (EVALSHA): Redis neither receives nor hashes their text on every call.

    await SCRIPT(redis, keys, args)             # one call; NOSCRIPT (a new or restarted Redis) -> EVAL loads it
    SCRIPT.queue(pipe, keys, args)              # inside a caller's transaction (EVAL: a miss would fail it whole)
    await run(redis, [A.call(keys, args), ...]) # several scripts in one round trip, each atomic by itself

A cluster's pipeline refuses EVALSHA (redis-py), and takes EVAL: `queue` works on both, `run` sends EVALSHA one
call at a time there. Every script here touches keys of one hash slot.

redis-py's own `Script` in a pipeline asks Redis whether it knows the script (a round trip of its own) on every
execute; here each script goes with EVALSHA straight away. In `run`, when Redis answers NOSCRIPT, that script is
loaded and only the calls that failed are sent again, so a call that ran is never run twice (its counters would be
added twice).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.exceptions import NoScriptError

AnyRedis = Redis | RedisCluster  # a single Redis or a cluster (REDIS_CLUSTER=true): every store takes either
AnyPipeline = Pipeline | ClusterPipeline


class Script:
    """A Lua script known by its SHA1."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    async def __call__(self, redis: Redis | RedisCluster, keys: tuple[str, ...], args: tuple[Any, ...]) -> Any:
        try:
            return await redis.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:  # a Redis that restarted, or never ran it: EVAL loads it for the next calls
            return await redis.eval(self.source, len(keys), *keys, *args)

    def queue(self, pipe: AnyPipeline, keys: tuple[str, ...], args: tuple[Any, ...]) -> None:
        """EVAL in a pipeline: a missing script there would fail the whole pipeline, and a check costs a round trip."""
        pipe.eval(self.source, len(keys), *keys, *args)

    def call(self, keys: Sequence[str], args: Sequence[str | int]) -> Call:
        return Call(self, tuple(keys), tuple(args))


@dataclass(frozen=True)
class Call:
    """One call of a script: its keys (one hash slot) and arguments."""

    script: Script
    keys: tuple[str, ...]
    args: tuple[str | int, ...]


async def run(redis: Redis | RedisCluster, calls: Sequence[Call]) -> list[object]:
    """Send `calls` in one non-transactional pipeline (each script is atomic by itself); their results, in order.
    Raises the first error but NOSCRIPT, after which the scripts are loaded and the failed calls sent once more.
    On a cluster, whose pipelines refuse EVALSHA, each call goes by itself, all at once."""
    if isinstance(redis, RedisCluster):
        results = await asyncio.gather(
            *(call.script(redis, call.keys, call.args) for call in calls), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return list(results)
    results = await _send(redis, calls)
    missing = [index for index, result in enumerate(results) if isinstance(result, NoScriptError)]
    if missing:
        for script in {calls[index].script.sha: calls[index].script for index in missing}.values():
            await redis.script_load(script.source)
        for index, result in zip(missing, await _send(redis, [calls[index] for index in missing]), strict=True):
            results[index] = result
    for result in results:
        if isinstance(result, Exception):
            raise result
    return results


async def _send(redis: Redis, calls: Sequence[Call]) -> list[object]:
    async with redis.pipeline(transaction=False) as pipe:
        for call in calls:
            pipe.evalsha(call.script.sha, len(call.keys), *call.keys, *call.args)
        return list(await pipe.execute(raise_on_error=False))
