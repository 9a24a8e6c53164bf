"""After Redis restarts, Folio's client reconnects on its next command: no old pooled connection fails once more."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.app.builders import redis_client
from bot.store import ConversationStore, ThreadKey
from tests.redis_process import RedisProcess

pytestmark = pytest.mark.slow  # a redis-server restarted: `python3 dev.py test --quick` skips it

THREAD = ThreadKey(team="T1", channel="C1", thread_ts="1.0")


async def test_the_first_commands_after_a_redis_restart_succeed_on_every_old_connection(tmp_path: Path) -> None:
    with RedisProcess(tmp_path / "redis") as redis:
        store = ConversationStore(redis_client(redis.url), prefix="reconnect")
        try:
            await store.ping()
            for _ in range(3):  # three connections in the pool, each then broken by the restart
                await _concurrently(store, 3)
            redis.kill()
            redis.start()

            await _concurrently(store, 3)  # each on an old connection: none fails (StoreUnavailable)
        finally:
            await store.close()


async def _concurrently(store: ConversationStore, n: int) -> None:
    assert await asyncio.gather(*(store.exists(THREAD) for _ in range(n))) == [False] * n
