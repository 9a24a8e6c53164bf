"""A per-thread lock in Redis: turns in one Slack thread run one at a time, in arrival order, and a dead holder's
hold frees within one short lease.

Keys, all under the thread's hash tag (one Redis Cluster slot, so every script below touches one slot):
    {prefix}:lock:{thread}:queue     waiters' tokens in arrival order (RPUSH before the ack)
    {prefix}:lock:{thread}:waiters   hash token -> heartbeat deadline (ms, Redis clock); a waiter refreshes it as it
                                     polls, so a dead waiter's place is dropped by the next one
    {prefix}:lock:{thread}:holder    "token:fence" of the holder, with a lease of LEASE_SECONDS that the holder renews
                                     every third of a lease while it holds; a dead holder's lease simply lapses
    {prefix}:lock:{thread}:fence     a counter that grows with every hold: the fence of the current holder

Fenced: renew and release act only when `holder` is exactly this holder's "token:fence", so a stale owner (a process
that was paused, or cut off from Redis, past its lease) cannot extend or release a newer owner's hold. When the
holder cannot renew within one lease, its work is cancelled and `async with` raises `LeaseLost`.

A queue keeps arrival order, which a plain `SET NX` lock does not: two quick follow-ups must chain one after the other.

Redis Cluster (issue 23): `enqueue_in` adds one-key commands to the caller's pipeline (which may span slots); every
script's KEYS are the thread's lock keys, one slot. `try_acquire_in` (the accept's first try for an idle thread) and
`release_in` (the release in the save's transaction, on the thread's slot) spare a turn two round trips. A cluster
client raises RedisClusterException, which is no RedisError, for some failures: `REDIS_FAILURES` catches both.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from types import TracebackType

from bot import messages, metrics
from bot.errors import LeaseLost, StoreUnavailable, ThreadBusy
from bot.store.failures import REDIS_FAILURES, store_failure
from bot.store.lease import LEASE_LOST_CANCEL, process_prefix, renew_every
from bot.store.scripts import AnyPipeline, AnyRedis, Script

log = logging.getLogger(__name__)

LEASE_SECONDS = 10.0  # a dead holder blocks its thread this long at most; the holder renews every third of it


# KEYS queue, waiters, holder, fence; ARGV token, lease_ms, heartbeat_ms. The fence key lives a day (86400000 ms).
# The fence (> 0) when the caller now holds the lock, 0 while someone alive holds it or is ahead, -1 when the caller
# is no longer in line (its heartbeat lapsed and a later waiter dropped it).
_TRY_ACQUIRE = Script("""
local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('HSET', KEYS[2], ARGV[1], now + ARGV[3])
redis.call('PEXPIRE', KEYS[2], 2 * ARGV[3])
redis.call('PEXPIRE', KEYS[1], 2 * ARGV[3])
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
while true do
  local head = redis.call('LINDEX', KEYS[1], 0)
  if not head then redis.call('HDEL', KEYS[2], ARGV[1]) return -1 end
  if head == ARGV[1] then
    redis.call('LPOP', KEYS[1])
    redis.call('HDEL', KEYS[2], head)
    local fence = redis.call('INCR', KEYS[4])
    redis.call('PEXPIRE', KEYS[4], 86400000)
    redis.call('SET', KEYS[3], head .. ':' .. fence, 'PX', ARGV[2])
    return fence
  end
  local alive = tonumber(redis.call('HGET', KEYS[2], head) or '0')
  if alive > now then return 0 end
  redis.call('LPOP', KEYS[1])
  redis.call('HDEL', KEYS[2], head)
end
""")

# KEYS queue, waiters, holder; ARGV a dead process's token prefix. Its hold and its places in line, gone.
_FORGET = Script("""
local function its(token) return string.sub(token, 1, #ARGV[1]) == ARGV[1] end
local n = 0
local held = redis.call('GET', KEYS[3])
if held and its(held) then redis.call('DEL', KEYS[3]) n = n + 1 end
for _, token in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if its(token) then redis.call('LREM', KEYS[1], 0, token) redis.call('HDEL', KEYS[2], token) n = n + 1 end
end
return n
""")

# KEYS holder, fence; ARGV "token:fence", fence, lease_ms. 1 while the hold is ours, 0 once someone else's.
# A hold that lapsed while nobody took it (the fence is unchanged, or gone with a Redis that restarted empty) is
# taken back: no one else held the thread meanwhile.
_RENEW = Script("""
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[3]) return 1 end
if held then return 0 end
local fence = redis.call('GET', KEYS[2])
if fence and fence ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
if not fence then redis.call('SET', KEYS[2], ARGV[2], 'PX', 86400000) end
return 1
""")

# KEYS holder, queue, waiters; ARGV "token:fence" (or ""), token. Leaves the line, and the hold only when it is ours.
_RELEASE = Script("""
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('LREM', KEYS[2], 0, ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
return 1
""")


class ThreadLock:
    """`await lock.enqueue()` takes a place in line (do it before acking); `async with lock:` waits for the turn,
    holds it (renewing the lease) and releases it. A lost lease cancels the body and raises `LeaseLost`."""

    def __init__(
        self,
        redis: AnyRedis,
        name: str,
        *,
        wait_seconds: float,
        lease_seconds: float = LEASE_SECONDS,
        poll_seconds: tuple[float, float] = (0.02, 0.25),
    ) -> None:
        self._redis = redis
        self._keys = tuple(f"{name}:{part}" for part in ("queue", "waiters", "holder", "fence"))
        self._token = f"{process_prefix()}{secrets.token_hex(8)}"  # whose: freed at once when that process dies
        self._lease_ms = int(lease_seconds * 1000)
        self._wait_seconds = wait_seconds
        self._poll_seconds = poll_seconds
        self._queued = False
        self.fence = 0  # > 0 while held: grows with every hold of this thread
        self._renewer: asyncio.Task[None] | None = None
        self._lost = False

    async def enqueue(self) -> None:
        """Join the queue; the place taken here decides the order turns run in."""
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                self.enqueue_in(pipe)
                await pipe.execute()
        except REDIS_FAILURES as exc:
            self._queued = False
            log.warning("redis: %r", exc)
            raise StoreUnavailable(store_failure(exc)) from exc

    def enqueue_in(self, pipe: AnyPipeline) -> None:
        """Add joining the queue to the caller's pipeline, so it costs no round trip of its own. Commands on one key
        each: the pipeline may hold commands for other hash slots."""
        queue, waiters, _, _ = self._keys
        pipe.rpush(queue, self._token)
        pipe.pexpire(queue, 2 * self._lease_ms)  # the waiters refresh it as they poll
        # The heartbeat deadline is on Redis's clock in the scripts; here it is only a first value that the first
        # poll (a moment later) replaces, so the local clock's skew does not matter.
        pipe.hset(waiters, self._token, int(time.time() * 1000) + self._lease_ms)
        pipe.pexpire(waiters, 2 * self._lease_ms)
        self._queued = True

    async def leave(self) -> None:
        """Give up the place in line (or the lock) without waiting; never raises."""
        await self._release()

    async def __aenter__(self) -> ThreadLock:
        if not self._queued:
            await self.enqueue()
        try:
            return await self._wait_for_turn()
        except asyncio.CancelledError:  # stopped while waiting (a hand-back): leave the line now, not a lease later
            await self._release()
            raise

    async def _wait_for_turn(self) -> ThreadLock:
        started = time.monotonic()
        deadline = started + self._wait_seconds
        pause, longest = self._poll_seconds
        while True:
            fence = self.fence or await self._try_acquire()  # held already when `accept` found the thread idle
            if fence > 0:
                metrics.lock_waited(time.monotonic() - started)
                self.fence, self._lost = fence, False
                holder = asyncio.current_task()
                assert holder is not None, "a lock is held by a task"
                self._renewer = asyncio.create_task(self._keep(holder), name=f"lease {self._keys[2]}")
                return self
            if fence == -1:  # our heartbeat lapsed and a later waiter dropped us: line up again
                await self.enqueue()
            if time.monotonic() > deadline:
                await self._release()
                raise ThreadBusy(messages.THREAD_BUSY)
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, longest)  # the queue keeps the order, so slower polling only saves Redis work

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop_renewing()
        if self.fence or self._queued:  # not when the turn's save released it already (`release_in`)
            await self._release()
        task = asyncio.current_task()
        if self._lost and exc_type is asyncio.CancelledError and task is not None and task.uncancel() == 0:
            raise LeaseLost(messages.LEASE_LOST) from exc  # our own cancel, and no one else's: say why

    async def stop_renewing(self) -> None:
        """Stop renewing the lease (before a release sent with other writes: a renewal after it would take the hold
        back)."""
        renewer, self._renewer = self._renewer, None
        while renewer is not None and not renewer.done():  # asyncio.wait never raises: its end is not the holder's
            renewer.cancel()  # again after a while: redis-py can swallow a cancel that lands mid-command (#2028)
            await asyncio.wait([renewer], timeout=0.1)

    def release_in(self, pipe: AnyPipeline) -> None:
        """Add releasing the hold to the caller's transaction on the thread's slot; call `released()` once it ran.
        Call `stop_renewing()` first."""
        queue, waiters, holder, _ = self._keys
        _RELEASE.queue(pipe, (holder, queue, waiters), (self._held() if self.fence else "", self._token))

    def released(self) -> None:
        """The release added by `release_in` ran: `async with` has nothing left to release."""
        self._queued, self.fence = False, 0

    def try_acquire_in(self, pipe: AnyPipeline) -> None:
        """Add a first try for the hold to the caller's pipeline, after `enqueue_in` (the thread's commands only: one
        slot); hand its reply to `tried`. An idle thread is then held without a round trip of its own."""
        _TRY_ACQUIRE.queue(pipe, self._keys, (self._token, self._lease_ms, self._lease_ms))

    def tried(self, reply: object) -> None:
        """The reply of `try_acquire_in`: held from now on when it is a fence (> 0); `async with` starts renewing."""
        fence = int(reply)  # type: ignore[call-overload]
        if fence > 0:
            self.fence, self._lost = fence, False

    async def _keep(self, holder: asyncio.Task[None]) -> None:
        """Renew the lease (bot.store.lease: every third of it); cancel the holder once it is someone else's or a lease went by
        without one renewal (Redis unreachable: another process may take the thread when the lease lapses)."""
        lease = self._lease_ms / 1000
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(renew_every(lease))
            try:
                ours = await self._renew()
            except REDIS_FAILURES:
                log.warning("could not renew the lease of %s", self._keys[2], exc_info=True)
                ours = time.monotonic() - renewed < lease
            else:
                renewed = time.monotonic() if ours else renewed
            if not ours:
                log.warning("lost the lease of %s (fence %d); stopping its turn", self._keys[2], self.fence)
                self._lost = True
                holder.cancel(LEASE_LOST_CANCEL)
                return

    async def _renew(self) -> bool:
        _, _, holder, fence = self._keys
        return bool(await _RENEW(self._redis, (holder, fence), (self._held(), self.fence, self._lease_ms)))

    async def _try_acquire(self) -> int:
        args = (self._token, self._lease_ms, self._lease_ms)
        try:
            return int(await _TRY_ACQUIRE(self._redis, self._keys, args))
        except REDIS_FAILURES as exc:
            log.warning("redis: %r", exc)
            raise StoreUnavailable(store_failure(exc)) from exc

    async def forget(self, holder: str) -> int:
        """The hold and places in line of a process seen dead (`holder`: its `process_prefix`), dropped now rather
        than when they lapse; how many."""
        queue, waiters, holder_key, _ = self._keys
        try:
            return int(await _FORGET(self._redis, (queue, waiters, holder_key), (holder,)))
        except REDIS_FAILURES as exc:
            raise StoreUnavailable(store_failure(exc)) from exc

    def _held(self) -> str:
        return f"{self._token}:{self.fence}"

    async def _release(self) -> None:
        # Never raises: a hold we could not release lapses within one lease, and the caller's own error matters more.
        self._queued = False
        held, self.fence = (self._held() if self.fence else ""), 0
        if not await self._try_release(held):
            log.warning("could not release thread lock %s; trying again while its lease runs", self._keys[2])
            retry = asyncio.create_task(self._release_later(held), name=f"release {self._keys[2]}")
            _releasing.add(retry)  # referenced until done: the loop keeps only weak references
            retry.add_done_callback(_releasing.discard)

    async def _try_release(self, held: str) -> bool:
        queue, waiters, holder, _ = self._keys
        try:
            await _RELEASE(self._redis, (holder, queue, waiters), (held, self._token))
            return True
        except REDIS_FAILURES:
            return False

    async def _release_later(self, held: str) -> None:
        """Redis was unreachable (restarting): release as soon as it is back, so the thread's next turn need not
        wait out the lease. Fenced, so releasing late never frees a newer holder's hold."""
        deadline = time.monotonic() + self._lease_ms / 1000
        while time.monotonic() < deadline:
            await asyncio.sleep(0.25)
            if await self._try_release(held):
                return


_releasing: set[asyncio.Task[None]] = set()
