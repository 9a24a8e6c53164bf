"""Usage counters and rate windows in Redis, seen alike by every replica and worker.

Keys (under the prefix `ConversationStore.keyspace("usage")` gives, default `folio:usage`):
    {prefix}:{YYYY-MM-DD}      one hash per UTC day, fields `dimension|value|metric`, expiring after the retention
                               period; the braces make the day the hash tag, so a turn's one script touches one slot
    {prefix}:qpm:{USER}        a person's questions of the last minute (a sorted set of times), for the rate cap

dimension: workspace, channel, user, profile; metric: turns, calls, searches, tokens (input + output: what budgets
count), and per model `in:MODEL`, `cached:MODEL`, `out:MODEL` (what the price table prices).
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta

from redis.asyncio import Redis

from bot.store.conversations import redis_errors

DIMENSIONS = ("workspace", "channel", "user", "profile")

# KEYS[1]: the day's hash; ARGV[1]: its time to live (seconds), then field, amount, field, amount, ...
_ADD = """
for i = 2, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
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
    calls: int = 0
    searches: int = 0
    models: Mapping[str, ModelTokens] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return sum(each.input + each.output for each in self.models.values())

    def fields(self) -> dict[str, int]:
        """The hash fields this turn adds to, and by how much (nothing for a zero)."""
        metrics: dict[str, int] = {"turns": 1, "calls": self.calls, "searches": self.searches, "tokens": self.tokens}
        for model, spent in self.models.items():
            metrics.update({f"in:{model}": spent.input, f"cached:{model}": spent.cached, f"out:{model}": spent.output})
        values = {"workspace": self.workspace, "channel": self.channel, "user": self.user, "profile": self.profile}
        return {
            f"{dimension}|{values[dimension]}|{metric}": amount
            for dimension in DIMENSIONS for metric, amount in metrics.items() if amount
        }  # fmt: skip


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
        self.models[model] = ModelTokens(
            input=spent.input + (amount if kind == "in" else 0), cached=spent.cached + (amount if kind == "cached" else 0),
            output=spent.output + (amount if kind == "out" else 0),
        )  # fmt: skip


class UsageStore:
    """Adds each turn's usage (one script, one round trip), reads the day's spending, and keeps rate windows."""

    def __init__(self, redis: Redis, *, prefix: str, retention_days: int) -> None:
        self._redis = redis
        self._prefix = prefix
        self._ttl = retention_days * 24 * 3600
        self._add = redis.register_script(_ADD)
        self._take = redis.register_script(_TAKE)

    def day_key(self, day: date) -> str:
        return f"{self._prefix}:{{{day.isoformat()}}}"

    async def add(self, usage: TurnUsage, *, day: date) -> None:
        """Add one turn's usage to the day's counters, atomically."""
        args: list[str | int] = [self._ttl]
        for name, amount in usage.fields().items():
            args += [name, amount]
        async with redis_errors():
            await self._add(keys=[self.day_key(day)], args=args)

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
            allowed, wait = await self._take(keys=[f"{self._prefix}:qpm:{{{user}}}"],
                                             args=[60, per_minute, secrets.token_hex(6)])  # fmt: skip
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
