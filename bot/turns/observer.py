"""What watches a turn: the `TurnObserver` hooks, passed into `answer` (as openai-agents passes `RunHooks`), and the
one `TurnRecorder` that gathers the turn from them once and hands it to its sinks when the turn ends: the `turn` log
line, the metrics, and, given a `Ledger` (bot.turns.governance), the usage counters and the trace.

    observer = TurnRecorder(request, content=settings.folio_log_content)                      # the terminal
    observer = TurnRecorder(request, content=..., ledger=folio.ledger, spawn=folio.tasks.spawn)  # a governed turn
    await take_turn(request, services=..., view=..., observer=observer)   # the record is logged when the turn ends

The record says where and for whom (workspace, channel, hashed thread, user ID), with what (profile, scope), what it
did (model calls, searches and their result counts, sources shown and cited, tokens), how long each phase took, and
how it ended. Nothing here is ambient: no context variable, no registry; the turn calls the observer it was given.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bot import metrics
from bot.agent.events import ModelCalled, Step, TurnEvent
from bot.errors import OverLimit
from bot.models import Answer, Scope
from bot.store.usage import ModelTokens, TurnUsage
from bot.turns.governance import Ledger, Spawn, write_ledger
from bot.turns.record import Phases, SearchRecord, TurnRecord, outcome_of, thread_hash
from bot.turns.request import TurnRequest
from bot.turns.trace import TraceBuilder, new_trace

log = logging.getLogger("folio.turn")


class TurnObserver:
    """The hooks of a turn, in the order they happen; each does nothing here (a turn nobody records: the terminal)."""

    def lock_taken(self, waited: float) -> None:
        """The turn holds its thread after waiting `waited` seconds."""

    def admitted(self, waited: float) -> None:
        """The busy event loop let the turn start after `waited` seconds."""

    def scoped(self, scope: Scope) -> None:
        """The scope the turn searches (resolved once, after the lock)."""

    def seen(self) -> None:
        """The person saw something of the turn (its first call counts: the first feedback)."""

    def event(self, event: TurnEvent) -> None:
        """A step, a model call, a response id, a piece of answer text (see `bot.agent.events`)."""

    def answered(self, answer: Answer) -> None:
        """The agent's final answer."""

    def failed(self, error: BaseException) -> None:
        """The turn failed (or was cancelled) with `error`."""

    def finished(self) -> None:
        """The turn is over, however it ended."""


@dataclass
class StepTimer:
    """How long each step took, from its "started" event to its end: the one clock every sink reads."""

    clock: Callable[[], float]
    _started: dict[str, float] = field(default_factory=dict)

    def lap(self, step: Step) -> float:
        """0 as a step starts; the seconds since it started as it ends."""
        now = self.clock()
        if step.status == "started":
            self._started[step.id] = now
            return 0.0
        return now - self._started.pop(step.id, now)


@dataclass
class TurnRecorder(TurnObserver):
    """Builds the turn's record from its hooks; `finished()` logs it and adds it to the metrics, and with a `ledger`
    adds what the turn spent to the usage counters and keeps its trace (written once, in a task of its own:
    `spawn`, so the answer never waits for the bookkeeping and a Redis failure there is only logged)."""

    request: TurnRequest
    content: bool = False  # FOLIO_LOG_CONTENT: the question, answer and search queries go into the record
    clock: Callable[[], float] = time.monotonic
    ledger: Ledger | None = None  # usage counters and traces: a governed turn (Slack)
    spawn: Spawn | None = None  # BackgroundTasks.spawn, for the ledger's write
    wall: Callable[[], float] = time.time  # the day usage is counted on
    started: float = field(init=False)
    scope: Scope | None = None
    answer: Answer | None = None
    error: BaseException | None = None
    model_calls: int = 0
    model_seconds: float = 0.0
    lock_wait: float = 0.0
    admission_wait: float = 0.0
    first_feedback: float | None = None  # seconds after `started`
    searches: list[SearchRecord] = field(default_factory=list)
    tokens: dict[str, ModelTokens] = field(default_factory=dict)  # by model
    _steps: StepTimer = field(init=False)
    _trace: TraceBuilder | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.started = self.clock()
        self._steps = StepTimer(self.clock)
        if self.ledger is not None and self.ledger.traces is not None:
            thread = self.request.thread
            trace = new_trace(
                workspace=thread.team,
                channel=thread.channel,
                thread_ts=thread.thread_ts,
                user=self.request.user,
                trigger=self.request.trigger,
            )
            self._trace = TraceBuilder(trace, with_text=not self.request.is_dm)

    def lock_taken(self, waited: float) -> None:
        self.lock_wait += waited  # the lock itself adds it to the lock-wait histogram

    def admitted(self, waited: float) -> None:
        self.admission_wait += waited

    def scoped(self, scope: Scope) -> None:
        self.scope = scope

    def seen(self) -> None:
        if self.first_feedback is None:
            self.first_feedback = self.clock() - self.started

    def event(self, event: TurnEvent) -> None:
        if isinstance(event, ModelCalled):
            self._model_called(event)
        elif isinstance(event, Step):
            seconds = self._steps.lap(event)
            if event.kind == "search" and event.status != "started":
                query = event.title if self.content else None  # "Searching: <the query>"
                self.searches.append(SearchRecord(len(event.sources), seconds, event.status == "failed", query))
            if self._trace is not None:
                self._trace.step(event, seconds)

    def _model_called(self, event: ModelCalled) -> None:
        self.model_calls += 1
        self.model_seconds += event.seconds
        metrics.model_call(event.profile, event.outcome, event.seconds)
        spent = self.tokens.get(event.model, ModelTokens())
        self.tokens[event.model] = ModelTokens(
            spent.input + event.input_tokens, spent.cached + event.cached_tokens, spent.output + event.output_tokens
        )
        if self._trace is not None:
            self._trace.model_called(event)

    def answered(self, answer: Answer) -> None:
        self.answer = answer
        if self._trace is not None:
            self._trace.answered(answer, self.request.question)

    def failed(self, error: BaseException) -> None:
        self.error = self.error or error

    def finished(self) -> None:
        try:
            record = self.record()
            log.info(record.line(), extra={"turn": record.fields()})
            metrics.turn_finished(record.figures())
            metrics.cached_tokens(sum(spent.cached for spent in self.tokens.values()))
        except Exception:  # a broken record must never break a turn that already answered
            log.exception("could not record the turn")
        if self.ledger is None or self.spawn is None or isinstance(self.error, OverLimit):
            return  # a refused turn spent nothing and said nothing worth tracing
        trace = self._trace.finish(outcome_of(self.answer, self.error)) if self._trace is not None else None
        try:
            work = write_ledger(self.ledger, self.request, self.usage(), trace, at=self.wall())
            self.spawn(work, name=f"ledger {self.request.thread}")
        except Exception:  # the record must never break a turn that already answered
            log.exception("could not record the turn's usage")

    def usage(self) -> TurnUsage:
        """What this turn spent, for whom."""
        thread, answer = self.request.thread, self.answer
        return TurnUsage(
            workspace=thread.team,
            channel=thread.channel,
            user=self.request.user,
            profile=answer.profile if answer else (self.request.profile or "fast"),
            surface=self.request.surface,
            calls=self.model_calls,
            searches=len(self.searches),
            models={model: spent for model, spent in self.tokens.items() if model},
        )

    def record(self) -> TurnRecord:
        """The record as it stands."""
        thread, answer, scope = self.request.thread, self.answer, self.scope
        phases = Phases(
            total=self.clock() - self.started,
            first_feedback=self.first_feedback,
            lock_wait=self.lock_wait,
            admission_wait=self.admission_wait,
            model=self.model_seconds,
            search=sum(search.seconds for search in self.searches),
        )
        return TurnRecord(
            workspace=thread.team,
            channel=thread.channel,
            thread=thread_hash(thread.team, thread.channel, thread.thread_ts),
            user=self.request.user,
            profile=answer.profile if answer else (self.request.profile or "fast"),
            containers=scope.containers if scope else (),
            tags=tuple(str(tag) for tag in scope.tags) if scope else (),
            outcome=outcome_of(answer, self.error),
            model_calls=self.model_calls,
            searches=tuple(self.searches),
            sources_shown=sum(search.results for search in self.searches),
            sources_cited=len(answer.citations) if answer else 0,
            citations_removed=len(answer.removed_markers) if answer else 0,
            input_tokens=answer.usage.input_tokens if answer else 0,
            output_tokens=answer.usage.output_tokens if answer else 0,
            phases=phases,
            question=self.request.question if self.content else None,
            answer=answer.text if self.content and answer else None,
            surface=self.request.surface,
        )
