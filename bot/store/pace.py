"""A rate budget every process spends together: a token bucket per name, kept in Redis.

    pace = SharedPace(redis, prefix="folio:pace", per_minute=80, burst=20)
    wait = await pace.take("T0123")           # 0.0: one call spent; else the seconds until one is there (none spent)
    await pace.drain("T0123", seconds=5)      # Slack answered 429 with Retry-After 5: nobody calls before then

Why Redis and not each process's memory: Slack counts a method's calls per workspace, whatever sends them, and
Folio runs several worker processes (and replicas) on one Redis; a bucket per process would let N of them spend N
times the tier. One call of one short script per take (one key, so one hash slot in a cluster), with Redis's own
clock (TIME), so replicas whose clocks differ still agree. A take never reserves a future slot: a caller refused
keeps gathering what it would send and asks again, so its next call carries more (its batch widens).

Key `{prefix}:{name}` is a hash (tokens, at: milliseconds of Redis's clock); it expires once the bucket would be
full again, so idle workspaces leave nothing behind.
"""

from __future__ import annotations

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from bot.store.errors import redis_errors
from bot.store.scripts import Script

# KEYS[1] the bucket; ARGV: tokens a millisecond, burst, and hold (ms): 0 to take one, > 0 to empty the bucket so
# that the next token comes `hold` ms from now. Returns 0 when a token was taken, else the ms until one is there.
_TAKE = Script("""
redis.replicate_commands()
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local rate, burst, hold = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if hold > 0 then
  tokens = math.min(tokens, 1 - hold * rate)
elseif tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate) + 1000)
return wait
""")


class SharedPace:
    """`per_minute` calls a minute for each name, `burst` of them at once, shared through Redis.

    Slack's window is a minute: `burst + per_minute` is the most any minute can see, so a caller matching a tier of
    T calls a minute passes burst + per_minute <= T."""

    def __init__(self, redis: Redis | RedisCluster, *, prefix: str, per_minute: float, burst: int) -> None:
        if per_minute <= 0 or burst < 1:
            raise ValueError("a pace needs per_minute > 0 and a burst of at least 1")
        self._redis = redis
        self._prefix = prefix
        self._rate = per_minute / 60_000  # tokens a millisecond
        self.per_minute = per_minute
        self.burst = burst

    async def take(self, name: str) -> float:
        """Spend one call of `name`'s budget: 0.0 when spent, else the seconds until one is there (nothing spent).
        StoreUnavailable when Redis fails."""
        async with redis_errors():
            waited = await _TAKE(self._redis, (self._key(name),), (repr(self._rate), self.burst, 0))
        return int(waited) / 1000

    async def drain(self, name: str, *, seconds: float) -> None:
        """Nobody spends `name`'s budget for `seconds` (Slack said so with a 429). StoreUnavailable when Redis fails."""
        async with redis_errors():
            await _TAKE(self._redis, (self._key(name),), (repr(self._rate), self.burst, max(1, round(seconds * 1000))))

    def _key(self, name: str) -> str:
        return f"{self._prefix}:{name}"


def append_pace(tier_per_minute: int) -> tuple[float, int]:
    """(calls a minute, burst) of the budget that keeps a workspace inside `tier_per_minute` appends in any minute:
    chat.appendStream is Tier 4, "100+ per minute" per workspace (docs.slack.dev/apis/web-api/rate-limits), and a
    bucket lets at most its burst plus its rate times a minute through in one minute. A fifth of it as burst: one
    stream's answer (a dozen appends) never waits while the workspace is quiet."""
    burst = max(1, tier_per_minute // 5)
    return float(tier_per_minute - burst), burst
