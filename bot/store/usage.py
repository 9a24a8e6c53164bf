"""Usage counters and rate windows in Redis, seen alike by every replica and worker.

Keys (under the prefix `ConversationStore.keyspace("usage")` gives, default `folio:usage`):
    {prefix}:{YYYY-MM-DD}      one hash per UTC day, fields `dimension|value|metric`, expiring after the retention
                               period; the braces make the day the hash tag, so a turn's one script touches one slot
    {prefix}:qpm:{USER}        a person's questions of the last minute (a sorted set of times), for the rate cap

Redis Cluster (issue 23): each script touches one key; `rows` pipelines one key per command without a transaction
(the days are in several slots); `spent` is one HMGET of one key.

dimension: workspace, channel, user, profile, surface (slack, mcp, terminal); metric: turns, calls, searches, tokens (input + output: what budgets
count), and per model `in:MODEL`, `cached:MODEL`, `out:MODEL` (what the price table prices).
"""

from __future__ import annotations

import dataclasses
import secrets
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from bot.store import scripts
from bot.store.conversations import redis_errors

DIMENSIONS = ("workspace", "channel", "user", "profile", "surface")
# What one turn may add to one counter. The model wire already refuses token counts no call can have; this bound
# keeps any other path (a new surface, a bug) from pushing a day's counter near 2**63, where every later HINCRBY of
# that field fails and nobody is counted (or budgeted) for the rest of the day.
MAX_AMOUNT = 10**12

# KEYS[1]: the day's hash; ARGV: its time to live (seconds), the number of dimensions D, D field prefixes
# ("user|U0123|"), then metric, amount, metric, amount, ... Every prefix gets every metric: few arguments to send.
_ADD = """
local dims = tonumber(ARGV[2])
for d = 3, 2 + dims do
  for i = 3 + dims, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[d] .. ARGV[i], ARGV[i + 1]) end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""

# KEYS[1]: the person's window; ARGV: window seconds, limit, a unique member. Returns {1, 0} when the question may
# go ahead (and counts it), {0, seconds until the oldest question in the window leaves it} otherwise. The server's
# own clock: every replica counts on one time line.
_TAKE = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
local window, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t - window)
if redis.call('ZCARD', KEYS[1]) >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tostring(tonumber(oldest[2]) + window - t)}
end
redis.call('ZADD', KEYS[1], t, ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(window) + 1)
return {1, '0'}
"""


ADD = scripts.Script(_ADD)
TAKE = scripts.Script(_TAKE)


@dataclass(frozen=True)
class ModelTokens:
    """The tokens one model was paid for (cached tokens are part of `input`)."""

    input: int = 0
    cached: int = 0
    output: int = 0


@dataclass(frozen=True, kw_only=True)
class TurnUsage:
    """What one turn spent, and for whom: the counters it adds."""

    workspace: str
    channel: str
    user: str
    profile: str
    surface: str = "slack"
    calls: int = 0
    searches: int = 0
    models: Mapping[str, ModelTokens] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return sum(each.input + each.output for each in self.models.values())

    def prefixes(self) -> list[str]:
        """The hash field prefix of each dimension this turn counts under."""
        values = (self.workspace, self.channel, self.user, self.profile, self.surface)
        return [f"{dimension}|{value}|" for dimension, value in zip(DIMENSIONS, values)]

    def metrics(self) -> dict[str, int]:
        """Each metric this turn adds to, and by how much (nothing for a zero)."""
        metrics: dict[str, int] = {"turns": 1, "calls": self.calls, "searches": self.searches, "tokens": self.tokens}
        for model, spent in self.models.items():
            metrics.update({f"in:{model}": spent.input, f"cached:{model}": spent.cached, f"out:{model}": spent.output})
        return {metric: min(amount, MAX_AMOUNT) for metric, amount in metrics.items() if amount > 0}


@dataclass
class UsageRow:
    """The totals of one row of `folio usage`: a day, or a channel, user, profile or workspace over the days asked."""

    key: str
    turns: int = 0
    calls: int = 0
    searches: int = 0
    models: dict[str, ModelTokens] = field(default_factory=dict)

    @property
    def input(self) -> int:
        return sum(each.input for each in self.models.values())

    @property
    def cached(self) -> int:
        return sum(each.cached for each in self.models.values())

    @property
    def output(self) -> int:
        return sum(each.output for each in self.models.values())

    def add(self, metric: str, amount: int) -> None:
        kind, _, model = metric.partition(":")
        if not model:  # "tokens" is what budgets read; a row adds its models' tokens itself
            if metric in ("turns", "calls", "searches"):
                setattr(self, metric, getattr(self, metric) + amount)
            return
        spent = self.models.get(model, ModelTokens())
        added = {"in": "input", "cached": "cached", "out": "output"}.get(kind)
        if added is not None:
            self.models[model] = dataclasses.replace(spent, **{added: getattr(spent, added) + amount})


class UsageStore:
    """Adds each turn's usage (one script, one round trip), reads the day's spending, and keeps rate windows."""

    def __init__(self, redis: Redis | RedisCluster, *, prefix: str, retention_days: int) -> None:
        self._redis = redis
        self._prefix = prefix
        self._ttl = retention_days * 24 * 3600

    def day_key(self, day: date) -> str:
        return f"{self._prefix}:{{{day.isoformat()}}}"

    def call(self, usage: TurnUsage, *, day: date) -> scripts.Call:
        """Adding one turn's usage to the day's counters: one script, atomic, on one key."""
        prefixes = usage.prefixes()
        args: list[str | int] = [self._ttl, len(prefixes), *prefixes]
        for metric, amount in usage.metrics().items():
            args += [metric, amount]
        return ADD.call([self.day_key(day)], args)

    async def add(self, usage: TurnUsage, *, day: date, also: Sequence[scripts.Call] = ()) -> None:
        """Add one turn's usage to the day's counters; `also` goes out in the same round trip (the turn's trace)."""
        async with redis_errors():
            await scripts.run(self._redis, [self.call(usage, day=day), *also])

    async def spent(self, day: date, counters: Iterable[tuple[str, str]]) -> list[int]:
        """Tokens spent on `day` by each (dimension, value), e.g. [("user", "U1"), ("workspace", "T1")]."""
        names = [f"{dimension}|{value}|tokens" for dimension, value in counters]
        async with redis_errors():
            values = await self._redis.hmget(self.day_key(day), names)
        return [int(value or 0) for value in values]

    async def take_question(self, user: str, *, per_minute: int) -> float:
        """Count one question of `user` if the last minute holds fewer than `per_minute`: 0.0; else the seconds until
        one more may be asked (and nothing is counted)."""
        async with redis_errors():
            allowed, wait = await TAKE(
                self._redis, (f"{self._prefix}:qpm:{{{user}}}",), (60, per_minute, secrets.token_hex(6))
            )
        return 0.0 if int(allowed) else max(float(wait), 0.0)

    async def rows(self, *, since: date, until: date, by: str) -> list[UsageRow]:
        """Totals from `since` to `until` (inclusive) by `day` or by a dimension, largest token count first for a
        dimension, oldest first for days."""
        days = [since + timedelta(days=n) for n in range((until - since).days + 1)]
        async with redis_errors():
            async with self._redis.pipeline(transaction=False) as pipe:  # one key per command: any slot
                for day in days:
                    pipe.hgetall(self.day_key(day))
                hashes = await pipe.execute()
        dimension = "workspace" if by == "day" else by
        rows: dict[str, UsageRow] = defaultdict(lambda: UsageRow(key=""))
        for day, counters in zip(days, hashes):
            for raw, amount in counters.items():
                name = raw.decode() if isinstance(raw, bytes) else raw
                kind, value, metric = name.split("|", 2)
                if kind != dimension:
                    continue
                key = day.isoformat() if by == "day" else value
                row = rows[key]
                row.key = key
                row.add(metric, int(amount))
        ordered = list(rows.values())
        if by == "day":
            return sorted(ordered, key=lambda row: row.key)
        return sorted(ordered, key=lambda row: (-(row.input + row.output), row.key))
