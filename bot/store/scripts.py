"""Lua scripts sent by hash inside one pipeline: several scripts, one round trip.

redis-py's `Script` in a pipeline asks Redis whether it knows the script (a round trip of its own) on every
execute; here each script is sent with EVALSHA straight away. Redis answers NOSCRIPT when it does not know one yet
(a new or restarted Redis): that script is loaded and only the calls that failed are sent again, so a call that ran
is never run twice (its counters would be added twice).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import NoScriptError


class Script:
    """A Lua script known by its SHA1."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def call(self, keys: Sequence[str], args: Sequence[str | int]) -> Call:
        return Call(self, tuple(keys), tuple(args))


@dataclass(frozen=True)
class Call:
    """One call of a script: its keys (one hash slot) and arguments."""

    script: Script
    keys: tuple[str, ...]
    args: tuple[str | int, ...]


async def run(redis: Redis, calls: Sequence[Call]) -> list[object]:
    """Send `calls` in one non-transactional pipeline (each script is atomic by itself); their results, in order.
    Raises the first error but NOSCRIPT, after which the scripts are loaded and the failed calls sent once more."""
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
