"""Turn traces in Redis, beside the conversation: `{prefix}:{{team}:{channel}:{thread_ts}}` (prefix
`ConversationStore.keyspace("trace")`) is a list of each turn's trace as JSON, oldest first, kept as long as
conversations are (its expiry restarts with each turn).

Redis Cluster (issue 23): one key per command and script; the key carries the thread's hash tag, so the
conversation's `delete` removes it in the same DEL. `find` SCANs (every primary, on a cluster) and matches the
names of older Folios too (no tag, `{prefix}:{team}:{channel}:{thread_ts}`, on a single Redis until adopted).
"""

from __future__ import annotations

from redis.asyncio import Redis

from bot.store import scripts
from bot.store.conversations import THIRTY_DAYS, ThreadKey, redis_errors
from bot.store.keys import trace_key

MAX_TURNS = 50  # a thread's traces kept: the latest turns are the ones anybody asks about

# KEYS[1]: the thread's list; ARGV: the trace, how many to keep, seconds to keep them
ADD = scripts.Script("""
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
""")


class TraceStore:
    def __init__(self, redis: Redis, *, prefix: str, ttl_seconds: int = THIRTY_DAYS) -> None:
        self._redis, self._prefix, self._ttl = redis, prefix, ttl_seconds

    def _key(self, thread: ThreadKey) -> str:
        return trace_key(self._prefix, thread)

    def call(self, thread: ThreadKey, trace_json: str) -> scripts.Call:
        """Keeping one more turn's trace, to send with the turn's usage in one round trip (`UsageStore.add`)."""
        return ADD.call([self._key(thread)], [trace_json, MAX_TURNS, self._ttl])

    async def add(self, thread: ThreadKey, trace_json: str) -> None:
        """Keep one more turn's trace (one script on one key)."""
        async with redis_errors():
            await scripts.run(self._redis, [self.call(thread, trace_json)])

    async def all(self, thread: ThreadKey) -> list[str]:
        """The thread's traces as JSON, oldest first (empty when none are kept)."""
        async with redis_errors():
            raw = await self._redis.lrange(self._key(thread), 0, -1)
        return [item.decode() if isinstance(item, bytes) else item for item in raw]

    async def find(self, *, thread_ts: str, channel: str | None = None) -> list[str]:
        """The traces of every thread rooted at `thread_ts` (in `channel`, when given), whatever its workspace: what
        `folio trace` is given is a link or a ts, which name no workspace. A SCAN: for the terminal, not for turns."""
        thread = f"*:{channel or '*'}:{thread_ts}"
        found: list[str] = []
        async with redis_errors():
            keys = sorted({key for pattern in (f"{self._prefix}:{thread}", f"{self._prefix}:{{{thread}}}")
                           async for key in self._redis.scan_iter(match=pattern, count=1000)})  # fmt: skip
            for key in keys:
                items = await self._redis.lrange(key, 0, -1)
                found += [item.decode() if isinstance(item, bytes) else item for item in items]
        return found

    async def delete(self, thread: ThreadKey) -> None:
        async with redis_errors():
            await self._redis.delete(self._key(thread))
