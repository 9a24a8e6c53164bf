"""Lua scripts sent by hash inside one pipeline: several scripts, one round trip.

redis-py's `Script` in a pipeline asks Redis whether it knows the script (a round trip of its own) on every
execute; here each script is sent with EVALSHA straight away, and loaded only when Redis answers NOSCRIPT (a new or
restarted Redis), after which the pipeline is sent once more.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import NoScriptError


class Script:
    """A Lua script known by its SHA1."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def queue(self, pipe: Pipeline, keys: list[str], args: list[str | int]) -> None:
        pipe.evalsha(self.sha, len(keys), *keys, *args)


async def run(redis: Redis, scripts: tuple[Script, ...], build: Callable[[Pipeline], None]) -> list[object]:
    """Send what `build` queues in one non-transactional pipeline (each script is atomic by itself)."""
    for attempt in (1, 2):
        try:
            async with redis.pipeline(transaction=False) as pipe:
                build(pipe)
                return await pipe.execute()
        except NoScriptError:
            if attempt == 2:
                raise
            for script in scripts:
                await redis.script_load(script.source)
    raise AssertionError("unreachable")
