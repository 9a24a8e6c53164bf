"""Budgets and rate caps: a turn over a daily token budget or the questions-per-minute cap is refused before its
first model call, with a sentence naming the limit and when it resets.

    budget = Budget(usage_store, limits=Limits.of(settings), policy=folio.channel_policy)
    TurnServices(..., guard=budget.check)     # the turn awaits it after its lock, before any model call

Daily budgets count input + output tokens per UTC day (cached tokens are input tokens); the counters are the ones
every replica adds to (`bot.store.usage`), so a limit holds across processes. A turn that starts under the limit
runs to its end: the spend past a budget is at most the turns already in flight. "Think harder" is a turn like
any other, for the same person and channel.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from bot import messages
from bot.config import ChannelPolicy, Settings
from bot.errors import NotConnected, OverLimit
from bot.store.usage import UsageStore
from bot.turns.request import TurnRequest


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The limits from Settings (None: no limit); a channel's `daily_tokens` in channels.yaml overrides the channel
    budget."""

    user_daily_tokens: int | None = None
    channel_daily_tokens: int | None = None
    workspace_daily_tokens: int | None = None
    questions_per_minute: int | None = None

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(
            user_daily_tokens=settings.folio_budget_user_daily_tokens,
            channel_daily_tokens=settings.folio_budget_channel_daily_tokens,
            workspace_daily_tokens=settings.folio_budget_workspace_daily_tokens,
            questions_per_minute=settings.folio_user_questions_per_minute,
        )


def channel_budget(policy: ChannelPolicy | None, request: TurnRequest, default: int | None) -> int | None:
    """The channel's budget: its rule's `daily_tokens`, else the setting."""
    if policy is None:
        return default
    try:
        rule = policy.rule_for(request.thread.channel, is_dm=request.is_dm)
    except NotConnected:
        return default
    return rule.daily_tokens or default


def until_midnight(now: float) -> float:
    """Seconds from `now` to the next midnight UTC, when daily budgets start again."""
    today = datetime.fromtimestamp(now, timezone.utc).date()
    midnight = datetime(today.year, today.month, today.day, tzinfo=timezone.utc) + timedelta(days=1)
    return midnight.timestamp() - now


class Budget:
    """Checks a turn against the day's budgets and the person's rate cap."""

    def __init__(
        self,
        usage: UsageStore,
        *,
        limits: Limits,
        policy: Callable[[], ChannelPolicy] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._usage, self._limits, self._policy, self._clock = usage, limits, policy, clock

    async def check(self, request: TurnRequest) -> None:
        """OverLimit (its message names the limit and when it resets) when the turn may not start."""
        await self._check_budgets(request)
        per_minute = self._limits.questions_per_minute
        if per_minute is not None:
            wait = await self._usage.take_question(request.user, per_minute=per_minute)
            if wait > 0:
                raise OverLimit(messages.too_many_questions(per_minute, retry_in=wait))

    async def _check_budgets(self, request: TurnRequest) -> None:
        limits, thread = self._limits, request.thread
        policy = self._policy() if self._policy is not None else None
        wanted = [
            ("user", request.user, limits.user_daily_tokens),
            ("channel", thread.channel, channel_budget(policy, request, limits.channel_daily_tokens)),
            ("workspace", thread.team, limits.workspace_daily_tokens),
        ]
        wanted = [(whose, value, limit) for whose, value, limit in wanted if limit is not None]
        if not wanted:
            return
        now = self._clock()
        day = datetime.fromtimestamp(now, timezone.utc).date()
        spent = await self._usage.spent(day, [(whose, value) for whose, value, _ in wanted])
        for (whose, _, limit), used in zip(wanted, spent):
            if limit is not None and used >= limit:
                raise OverLimit(messages.over_budget(whose, limit, resets_in=until_midnight(now)))
