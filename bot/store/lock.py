"""A per-thread lock in Redis that lets turns in one Slack thread run one at a time, in arrival order.

Each waiter takes a place in a Redis list (the queue) and owns a small token key: while it waits the key is a
heartbeat with a short expiry, while it holds the lock the key lives for the hold time. The head of the queue holds
the lock; a head whose key has expired (a crashed process, a turn past its hold time) is dropped by the next waiter.
This keeps arrival order, which a plain `SET NX` lock does not: two quick follow-ups must chain one after the other.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from types import TracebackType

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from bot import messages, metrics
from bot.errors import StoreUnavailable, ThreadBusy
from bot.store.failures import store_failure

log = logging.getLogger(__name__)

# Returns 1 when the caller now holds the lock, 0 while someone alive is ahead, -1 when the caller left the queue.
_TRY_ACQUIRE = """
redis.call('SET', ARGV[4] .. ARGV[1], 'waiting', 'PX', ARGV[3])
while true do
  local head = redis.call('LINDEX', KEYS[1], 0)
  if not head then return -1 end
  if head == ARGV[1] then
    redis.call('SET', ARGV[4] .. ARGV[1], 'held', 'PX', ARGV[2])
    redis.call('PEXPIRE', KEYS[1], ARGV[2] + ARGV[3])
    return 1
  end
  if redis.call('EXISTS', ARGV[4] .. head) == 1 then return 0 end
  redis.call('LPOP', KEYS[1])
end
"""


class ThreadLock:
    """`await lock.enqueue()` takes a place in line (do it before acking); `async with lock:` waits for the turn."""

    def __init__(
        self,
        redis: Redis,
        name: str,
        *,
        hold_seconds: float,
        wait_seconds: float,
        heartbeat_seconds: float = 15.0,
        poll_seconds: tuple[float, float] = (0.02, 0.25),
    ) -> None:
        self._redis = redis
        self._queue = f"{name}:queue"
        self._token_prefix = f"{name}:token:"
        self._token = secrets.token_hex(8)
        self._hold_ms = int(hold_seconds * 1000)
        self._heartbeat_ms = int(heartbeat_seconds * 1000)
        self._wait_seconds = wait_seconds
        self._poll_seconds = poll_seconds
        self._queued = False

    async def enqueue(self) -> None:
        """Join the queue; the place taken here decides the order turns run in."""
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                self.enqueue_in(pipe)
                await pipe.execute()
        except RedisError as exc:
            self._queued = False
            log.warning("redis: %r", exc)
            raise StoreUnavailable(store_failure(exc)) from exc

    def enqueue_in(self, pipe: Pipeline) -> None:
        """Add joining the queue to the caller's transaction, so it costs no round trip of its own."""
        pipe.rpush(self._queue, self._token)
        pipe.set(self._token_prefix + self._token, "waiting", px=self._heartbeat_ms)
        pipe.pexpire(self._queue, self._hold_ms + self._heartbeat_ms)
        self._queued = True

    async def leave(self) -> None:
        """Give up the place in line (or the lock) without waiting; never raises."""
        await self._leave()

    async def __aenter__(self) -> ThreadLock:
        if not self._queued:
            await self.enqueue()
        started = time.monotonic()
        deadline = started + self._wait_seconds
        pause, longest = self._poll_seconds
        while True:
            state = await self._try_acquire()
            if state == 1:
                metrics.lock_waited(time.monotonic() - started)
                return self
            if state == -1:  # our heartbeat lapsed and a later waiter dropped us: line up again
                await self.enqueue()
            if time.monotonic() > deadline:
                await self._leave()
                raise ThreadBusy(messages.THREAD_BUSY)
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, longest)  # the queue keeps the order, so slower polling only saves Redis work

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._leave()

    async def _try_acquire(self) -> int:
        args = (self._token, self._hold_ms, self._heartbeat_ms, self._token_prefix)
        try:
            return int(await self._redis.eval(_TRY_ACQUIRE, 1, self._queue, *args))
        except RedisError as exc:
            log.warning("redis: %r", exc)
            raise StoreUnavailable(store_failure(exc)) from exc

    async def _leave(self) -> None:
        # Never raises: a token we could not remove expires by itself, and the caller's own error matters more.
        self._queued = False
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.lrem(self._queue, 1, self._token)
                pipe.delete(self._token_prefix + self._token)
                await pipe.execute()
        except RedisError:
            log.warning("could not release thread lock %s; it expires by itself", self._queue, exc_info=True)
