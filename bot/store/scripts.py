"""Lua scripts run by their SHA (EVALSHA), so Redis neither receives nor hashes their text on every call."""

from __future__ import annotations

import hashlib
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import NoScriptError


class Script:
    """One Lua script: `await script(redis, keys, args)`; `script.queue(pipe, keys, args)` inside a pipeline."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.sha = hashlib.sha1(body.encode()).hexdigest()

    async def __call__(self, redis: Redis, keys: tuple[str, ...], args: tuple[Any, ...]) -> Any:
        try:
            return await redis.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:  # a Redis that restarted, or never ran it: EVAL loads it for the next calls
            return await redis.eval(self.body, len(keys), *keys, *args)

    def queue(self, pipe: Pipeline, keys: tuple[str, ...], args: tuple[Any, ...]) -> None:
        """EVAL in a pipeline: a missing script there would fail the whole pipeline, and a check costs a round trip."""
        pipe.eval(self.body, len(keys), *keys, *args)
