"""The intake: every accepted Slack delivery, recorded in Redis before the ack, until its turn is done.

A record is a processing lease: the process that accepted a delivery runs its turn at once and renews the lease
while it runs; when that process dies, the lease lapses and any serving process claims the record and runs the turn
again (bot.turns.consumer). Why not a Redis stream with a consumer group: every process runs the turns it accepts, so
a stream's delivery to "some consumer" would add a round trip and a reader per process for nothing; what is needed
is "who holds this record, until when", which a sorted set of lease deadlines says directly, and claiming one record
is one script.

Keys, all under the hash tag `{PREFIX:intake}` (one Redis Cluster slot, so each script below touches one slot):
    {PREFIX:intake}:seen:{delivery}   the delivery was accepted (its accept id), later "done"; 24 h: the dedupe key
    {PREFIX:intake}:due               sorted set: delivery -> lease deadline (ms, Redis clock); unfinished turns only
    {PREFIX:intake}:turn:{delivery}   hash: request (JSON), reply ("1": run only if the thread is Folio's), owner
                                      ("consumer#attempt", empty while claimable), attempt, shown (the ts of the
                                      message a previous attempt showed); 24 h

`owner` fences the record: renew, note_shown, done and hand-back act only for the attempt that holds it, so a stale
attempt (a paused process) cannot mark done or hand back a turn another process now runs.
Every Redis error leaves this module as StoreUnavailable (through `redis_errors`).

Redis Cluster (issue 23): `renew`, `claim` and `hand_back` pipeline their scripts without a transaction (EVAL: a
cluster pipeline refuses EVALSHA), all on the intake's one slot; `unfinished` is ZCARD of one key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.store.errors import redis_errors
from bot.store.scripts import AnyPipeline, AnyRedis, Script

SEEN_TTL = 24 * 3600  # Slack retries an event for minutes at most; a day is ample

# KEYS seen, due, turn; ARGV delivery, request, owner, lease_ms, ttl_s, accept id, reply.
# 1 when recorded now (or by this very accept, retried after a lost reply), 0 for a delivery seen before.
_ACCEPT = Script("""
local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)
local seen = redis.call('GET', KEYS[1])
if seen then
  if seen == ARGV[6] then return 1 end
  return 0
end
redis.call('SET', KEYS[1], ARGV[6], 'EX', ARGV[5])
redis.call('HSET', KEYS[3], 'request', ARGV[2], 'reply', ARGV[7], 'owner', ARGV[3], 'attempt', 1)
redis.call('EXPIRE', KEYS[3], ARGV[5])
redis.call('ZADD', KEYS[2], now + ARGV[4], ARGV[1])
return 1
""")

# KEYS due; ARGV limit. Deliveries whose lease lapsed.
_DUE = Script("""
local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[1])
""")

# KEYS due. Every unfinished delivery, lease lapsed or not.
_ALL = Script("""return redis.call('ZRANGE', KEYS[1], 0, -1)""")

# KEYS due, turn; ARGV delivery, consumer, lease_ms. {owner, request, reply, attempt, shown} once claimed, else {}.
# A damaged record must not fail the claim (a script error fails the whole pipeline: no record of anyone would be
# taken over): a turn key that is not a hash is dropped; an attempt that is not a number counts as the first.
_CLAIM = Script("""
local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)
local deadline = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not deadline or tonumber(deadline) > now then return {} end
if redis.call('TYPE', KEYS[2])['ok'] ~= 'hash' then
  redis.call('ZREM', KEYS[1], ARGV[1]) redis.call('DEL', KEYS[2]) return {}
end
local before = tonumber(redis.call('HGET', KEYS[2], 'attempt'))
if not before or before ~= math.floor(before) or before < 0 or before > 1000000 then before = 1 end
local attempt = before + 1
redis.call('HSET', KEYS[2], 'attempt', attempt)
local owner = ARGV[2] .. '#' .. attempt
redis.call('HSET', KEYS[2], 'owner', owner)
redis.call('ZADD', KEYS[1], now + ARGV[3], ARGV[1])
local got = redis.call('HMGET', KEYS[2], 'request', 'reply', 'shown')
return {owner, got[1], got[2] or '', tostring(attempt), got[3] or ''}
""")

# KEYS due, turn; ARGV delivery, owner, lease_ms. 1 while the record is this attempt's, else 0.
_RENEW = Script("""
local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)
if redis.call('HGET', KEYS[2], 'owner') ~= ARGV[2] then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + ARGV[3], ARGV[1])
return 1
""")

# KEYS turn; ARGV owner, ts.
_SHOWN = Script("""
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'shown', ARGV[2])
return 1
""")

# KEYS seen, due, turn; ARGV delivery, owner.
_DONE = Script("""
if redis.call('HGET', KEYS[3], 'owner') ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('SET', KEYS[1], 'done', 'KEEPTTL')
return 1
""")

# KEYS due, turn; ARGV delivery, owner, counts ("1": this attempt counts towards the limit). Claimable at once.
_HAND_BACK = Script("""
if redis.call('HGET', KEYS[2], 'owner') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[2], 'owner', '')
if ARGV[3] ~= '1' then redis.call('HINCRBY', KEYS[2], 'attempt', -1) end
redis.call('ZADD', KEYS[1], 0, ARGV[1])
return 1
""")


@dataclass(frozen=True)
class Claimed:
    """A record some attempt now holds: its request, whether it runs only in Folio's threads, and what an earlier
    attempt showed."""

    delivery: str
    owner: str
    request: str
    reply: bool
    attempt: int
    shown_ts: str | None  # the message an earlier attempt showed (the record's `shown` field)


class Intake:
    """The durable record of accepted deliveries (see the module docstring for the keys)."""

    def __init__(self, redis: AnyRedis, *, prefix: str, lease_seconds: float) -> None:
        self._redis = redis
        self._tag = f"{{{prefix}:intake}}"
        self.lease_ms = int(lease_seconds * 1000)

    def accept_in(
        self, pipe: AnyPipeline, delivery: str, request: str, *, owner: str, accept_id: str, reply: bool
    ) -> None:
        """Add "record this delivery unless seen before" to the caller's pipeline; its result is 1 when recorded."""
        keys = (self._seen(delivery), self._due(), self._turn(delivery))
        _ACCEPT.queue(pipe, keys, (delivery, request, owner, self.lease_ms, SEEN_TTL, accept_id, "1" if reply else ""))

    async def renew(self, held: Iterable[tuple[str, str]]) -> set[str]:
        """Extend the leases of `(delivery, owner)` records; returns the deliveries that are no longer ours."""
        held = list(held)
        if not held:
            return set()
        async with redis_errors():
            async with self._redis.pipeline(transaction=False) as pipe:
                for delivery, owner in held:
                    _RENEW.queue(pipe, (self._due(), self._turn(delivery)), (delivery, owner, self.lease_ms))
                kept = await pipe.execute()
        return {delivery for (delivery, _), ours in zip(held, kept, strict=True) if not ours}

    async def claim(self, consumer: str, *, limit: int) -> list[Claimed]:
        """Take up to `limit` records whose lease lapsed (their worker died, or handed them back)."""
        async with redis_errors():
            due = await _DUE(self._redis, (self._due(),), (limit,))
            if not due:
                return []
            async with self._redis.pipeline(transaction=False) as pipe:
                for delivery in due:
                    keys = (self._due(), self._turn(_text(delivery)))
                    _CLAIM.queue(pipe, keys, (_text(delivery), consumer, self.lease_ms))
                replies = await pipe.execute()
        return [_claimed(_text(delivery), reply) for delivery, reply in zip(due, replies, strict=True) if reply]

    async def note_shown(self, delivery: str, owner: str, ts: str) -> None:
        """Note the message this attempt shows, so that a later attempt updates it instead of posting anew."""
        async with redis_errors():
            await _SHOWN(self._redis, (self._turn(delivery),), (owner, ts))

    async def done(self, delivery: str, owner: str) -> bool:
        """The turn is answered (or its failure shown): forget the record, keep the dedupe mark."""
        async with redis_errors():
            keys = (self._seen(delivery), self._due(), self._turn(delivery))
            return bool(await _DONE(self._redis, keys, (delivery, owner)))

    async def hand_back(self, held: Sequence[tuple[str, str]], *, counts: bool) -> None:
        """Make records claimable at once; `counts`: the attempt counts towards the limit (it failed, it was not
        merely stopped)."""
        if not held:
            return
        async with redis_errors():
            async with self._redis.pipeline(transaction=False) as pipe:
                for delivery, owner in held:
                    keys = (self._due(), self._turn(delivery))
                    _HAND_BACK.queue(pipe, keys, (delivery, owner, "1" if counts else ""))
                await pipe.execute()

    async def release(self, consumer: str) -> list[str]:
        """Make every record held by `consumer` (an owner's prefix: `bot.store.lease.process_prefix` of a process its
        parent saw die) claimable at once rather than when its lease lapses, the dead attempt counted; the requests
        of those released (their threads' locks are the dead process's too)."""
        async with redis_errors():
            due = [_text(delivery) for delivery in await _ALL(self._redis, (self._due(),), ())]
            if not due:
                return []
            async with self._redis.pipeline(transaction=False) as pipe:
                for delivery in due:
                    pipe.hmget(self._turn(delivery), ["owner", "request"])
                found = await pipe.execute()
        held = [
            (delivery, _text(owner), _text(request))
            for delivery, (owner, request) in zip(due, found, strict=True)
            if owner and request and _text(owner).startswith(consumer)
        ]
        await self.hand_back([(delivery, owner) for delivery, owner, _ in held], counts=True)
        return [request for _, _, request in held]

    async def unfinished(self) -> int:
        """How many accepted turns are not done (running, or waiting to be claimed)."""
        async with redis_errors():
            return int(await self._redis.zcard(self._due()))

    def _seen(self, delivery: str) -> str:
        return f"{self._tag}:seen:{delivery}"

    def _due(self) -> str:
        return f"{self._tag}:due"

    def _turn(self, delivery: str) -> str:
        return f"{self._tag}:turn:{delivery}"


def _claimed(delivery: str, reply: list[bytes | str]) -> Claimed:
    owner, request, is_reply, attempt, shown = (_text(part) for part in reply)
    return Claimed(
        delivery=delivery,
        owner=owner,
        request=request,
        reply=is_reply == "1",
        attempt=int(attempt),
        shown_ts=shown or None,
    )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
