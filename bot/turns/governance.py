"""The observer of a governed turn: the turn record (log line, metrics) plus what it spent, added to the usage
counters every replica shares, and its trace, kept beside the conversation for admins.

    observer = GovernedRecorder(request, content=..., ledger=Ledger(usage, traces), spawn=folio.tasks.spawn)

The hooks are synchronous; what they gathered is written to Redis once, when the turn has finished, in a task of
its own (`spawn`), so the person's answer never waits for the bookkeeping and a Redis failure there is only logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from bot import metrics
from bot.agent.events import ModelCalled, Step, TurnEvent
from bot.errors import OverLimit
from bot.models import Answer
from bot.store.traces import TraceStore
from bot.store.usage import ModelTokens, TurnUsage, UsageStore
from bot.turns.observer import TurnRecorder
from bot.turns.record import outcome_of
from bot.turns.trace import ANSWERED, TraceBuilder, new_trace

log = logging.getLogger(__name__)

Spawn = Callable[..., Any]  # BackgroundTasks.spawn(coroutine, name=...)


@dataclass(frozen=True)
class Ledger:
    """Where governed turns write: the usage counters, and the traces (None: FOLIO_TRACES=false)."""

    usage: UsageStore
    traces: TraceStore | None


@dataclass
class GovernedRecorder(TurnRecorder):
    ledger: Ledger | None = None
    spawn: Spawn | None = None
    wall: Callable[[], float] = time.time
    tokens: dict[str, ModelTokens] = field(default_factory=dict)
    search_count: int = 0
    _trace: TraceBuilder | None = None
    _started_at: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.ledger is not None and self.ledger.traces is not None:
            thread = self.request.thread
            trace = new_trace(workspace=thread.team, channel=thread.channel, thread_ts=thread.thread_ts,
                              user=self.request.user)  # fmt: skip
            self._trace = TraceBuilder(trace, with_text=not self.request.is_dm)

    def event(self, event: TurnEvent) -> None:
        super().event(event)
        if isinstance(event, ModelCalled):
            spent = self.tokens.get(event.model, ModelTokens())
            self.tokens[event.model] = ModelTokens(spent.input + event.input_tokens,
                                                   spent.cached + event.cached_tokens,
                                                   spent.output + event.output_tokens)  # fmt: skip
            if self._trace is not None:
                self._trace.model_called(event)
        elif isinstance(event, Step):
            if event.kind == "search" and event.status != "started":
                self.search_count += 1
            if self._trace is not None:
                now = self.clock()
                started = self._started_at.pop(event.id, now) if event.status != "started" else now
                if event.status == "started":
                    self._started_at[event.id] = now
                self._trace.step(event, now - started)

    def answered(self, answer: Answer) -> None:
        super().answered(answer)
        if self._trace is not None:
            self._trace.answered(answer, self.request.question)

    def finished(self) -> None:
        super().finished()
        metrics.cached_tokens(sum(spent.cached for spent in self.tokens.values()))
        if self.ledger is None or self.spawn is None or isinstance(self.error, OverLimit):
            return  # a refused turn spent nothing and said nothing worth tracing
        try:
            self.spawn(self._write(self.ledger), name=f"ledger {self.request.thread}")
        except Exception:  # the record must never break a turn that already answered
            log.exception("could not record the turn's usage")

    def usage(self) -> TurnUsage:
        """What this turn spent, for whom."""
        thread, answer = self.request.thread, self.answer
        return TurnUsage(
            workspace=thread.team, channel=thread.channel, user=self.request.user,
            profile=answer.profile if answer else (self.request.profile or "fast"), surface=self.request.surface,
            calls=self.model_calls, searches=self.search_count,
            models={model: spent for model, spent in self.tokens.items() if model},
        )  # fmt: skip

    async def _write(self, ledger: Ledger) -> None:
        """The usage counters and the trace, in one round trip; a failure is logged (counters a little short beat
        a turn that fails after answering)."""
        day = datetime.fromtimestamp(self.wall(), timezone.utc).date()
        also = []
        if self._trace is not None and ledger.traces is not None:
            trace = self._trace.finish(outcome_of(self.answer, self.error))
            also.append(ledger.traces.call(self.request.thread, trace.to_json()))
            if trace.outcome in ANSWERED and not self.request.is_dm:  # an admin's Home tab lists channel answers
                also.append(ledger.traces.listing(self.request.thread, at=self.wall()))
        try:
            await ledger.usage.add(self.usage(), day=day, also=also)
        except Exception:
            log.warning("could not record the usage or trace of %s", self.request.thread, exc_info=True)
