"""One structured log record per Slack turn, and the metrics it adds, built from the turn's events and its Answer.

`bot.slack.turns` hooks in at four places:

    folio.tasks.spawn(observed(answer_in_thread(...), request, content=...))   # the turn runs under a meter
    run_turn(..., events=tap(listener, scope=scope))                            # its events pass through the meter
    answered(answer)  /  failed(error)                                          # how it ended

The record says where and for whom (workspace, channel, hashed thread, user ID), with what (profile, scope), what it
did (model calls, searches and their result counts, sources shown and cited, tokens), how long each phase took, and
how it ended. The question, the answer and the search queries are in it only with FOLIO_LOG_CONTENT=true.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError

from bot import metrics
from bot.agent.events import Listener, Step, TurnEvent
from bot.agent.provider_errors import outcome as error_kind
from bot.errors import FolioError
from bot.models import Answer, Scope

if TYPE_CHECKING:
    from bot.slack.turns import TurnRequest

log = logging.getLogger("folio.turn")


@dataclass(frozen=True)
class SearchRecord:
    results: int  # new sources the search showed the model
    seconds: float
    failed: bool = False
    query: str | None = None  # only with FOLIO_LOG_CONTENT


@dataclass(frozen=True)
class Phases:
    """Seconds spent in each phase of a turn (model and search overlap nothing else; the rest is Folio and Slack)."""

    total: float
    first_feedback: float | None  # until the thread first showed something (status, placeholder, stream)
    lock_wait: float
    admission_wait: float
    model: float
    search: float


@dataclass(frozen=True)
class TurnRecord:
    """The per-turn log record (no message text unless `question` / `answer` are filled in)."""

    workspace: str
    channel: str
    thread: str  # a hash of the thread's ts: threads can be told apart without being looked up
    user: str
    profile: str
    containers: tuple[str, ...]
    tags: tuple[str, ...]
    outcome: str
    model_calls: int
    searches: tuple[SearchRecord, ...]
    sources_shown: int
    sources_cited: int
    citations_removed: int
    input_tokens: int
    output_tokens: int
    phases: Phases
    question: str | None = None
    answer: str | None = None

    def fields(self) -> dict[str, Any]:
        """The record as JSON-ready fields (what FOLIO_LOG_FORMAT=json prints under "turn")."""
        fields = asdict(self)
        fields["containers"], fields["tags"] = list(self.containers), list(self.tags)
        fields["phases"] = {name: _ms(value) for name, value in fields["phases"].items()}
        fields["searches"] = [
            {key: (_ms(value) if key == "seconds" else value) for key, value in search.items() if value is not None}
            for search in fields["searches"]
        ]
        return {key: value for key, value in fields.items() if value is not None}

    def line(self) -> str:
        """The record as one `key=value` line, for FOLIO_LOG_FORMAT=text."""
        phases = ",".join(f"{k}:{_ms(v)}" for k, v in asdict(self.phases).items() if v is not None)
        searches = ",".join(f"{s.results}{'!' if s.failed else ''}" for s in self.searches) or "-"
        parts = [
            f"outcome={self.outcome}", f"profile={self.profile}", f"workspace={self.workspace}",
            f"channel={self.channel}", f"thread={self.thread}", f"user={self.user}",
            f"scope={'|'.join(self.containers) or '-'}", f"tags={'|'.join(self.tags) or '-'}",
            f"model_calls={self.model_calls}", f"searches={searches}", f"shown={self.sources_shown}",
            f"cited={self.sources_cited}", f"removed={self.citations_removed}",
            f"tokens={self.input_tokens}/{self.output_tokens}", f"ms={phases}",
        ]  # fmt: skip
        if self.question is not None:
            parts.append(f"question={self.question!r}")
        if self.answer is not None:
            parts.append(f"answer={self.answer!r}")
        return "turn " + " ".join(parts)

    def figures(self) -> metrics.TurnFigures:
        return metrics.TurnFigures(
            outcome=self.outcome, profile=self.profile, seconds=self.phases.total,
            first_feedback=self.phases.first_feedback,
            searches=tuple((search.seconds, search.failed) for search in self.searches),
            citations_removed=self.citations_removed, input_tokens=self.input_tokens, output_tokens=self.output_tokens,
        )  # fmt: skip


def outcome_of(answer: Answer | None, error: BaseException | None) -> str:
    """answered, not_answered, search_only; or what failed: model_misconfigured, timeout, slack_error, ..."""
    if isinstance(error, asyncio.CancelledError):
        return "cancelled"
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, FolioError):
        return error_kind(error)
    if isinstance(error, SlackApiError):
        return "slack_error"
    if error is not None:
        return "error"
    if answer is None:
        return "unknown"
    if answer.mode == "search_only":
        return "search_only"
    return "answered" if answer.answerable else "not_answered"


def thread_hash(workspace: str, channel: str, thread_ts: str) -> str:
    return hashlib.sha256(f"{workspace}:{channel}:{thread_ts}".encode()).hexdigest()[:16]


@dataclass
class TurnMeter:
    """What one turn reports while it runs; `record()` turns it into a TurnRecord."""

    request: TurnRequest
    content: bool
    tally: metrics.TurnTally = field(default_factory=metrics.TurnTally)
    scope: Scope | None = None
    answer: Answer | None = None
    error: BaseException | None = None
    searches: list[SearchRecord] = field(default_factory=list)
    _started: dict[str, float] = field(default_factory=dict)

    def step(self, event: TurnEvent) -> None:
        if not isinstance(event, Step) or event.kind != "search":
            return
        if event.status == "started":
            self._started[event.id] = time.monotonic()
            return
        seconds = time.monotonic() - self._started.pop(event.id, time.monotonic())
        query = event.title if self.content else None  # "Searching: <the query>"
        self.searches.append(SearchRecord(len(event.sources), seconds, event.status == "failed", query))

    def record(self) -> TurnRecord:
        thread, answer, tally, scope = self.request.thread, self.answer, self.tally, self.scope
        phases = Phases(
            total=tally.elapsed(), first_feedback=tally.first_feedback, lock_wait=tally.lock_wait,
            admission_wait=tally.admission_wait, model=tally.model_seconds,
            search=sum(search.seconds for search in self.searches),
        )  # fmt: skip
        content = self.content
        return TurnRecord(
            workspace=thread.team,
            channel=thread.channel,
            thread=thread_hash(thread.team, thread.channel, thread.thread_ts),
            user=self.request.user,
            profile=answer.profile if answer else (self.request.profile or "fast"),
            containers=scope.containers if scope else (),
            tags=tuple(str(tag) for tag in scope.tags) if scope else (),
            outcome=outcome_of(answer, self.error),
            model_calls=tally.model_calls,
            searches=tuple(self.searches),
            sources_shown=sum(search.results for search in self.searches),
            sources_cited=len(answer.citations) if answer else 0,
            citations_removed=len(answer.removed_markers) if answer else 0,
            input_tokens=answer.usage.input_tokens if answer else 0,
            output_tokens=answer.usage.output_tokens if answer else 0,
            phases=phases,
            question=self.request.question if content else None,
            answer=answer.text if content and answer else None,
        )


_meter: ContextVar[TurnMeter | None] = ContextVar("folio_turn_meter", default=None)


async def observed(work: Awaitable[None], request: TurnRequest, *, content: bool) -> None:
    """Run one turn's `work` under a meter; then log its record and add it to the metrics (never raises for that)."""
    with metrics.start_tally() as tally:
        meter = TurnMeter(request, content, tally)
        token = _meter.set(meter)
        try:
            await work
        except asyncio.CancelledError as cancelled:  # shutdown: the record says so
            meter.error = meter.error or cancelled
            raise
        finally:
            _meter.reset(token)
            _emit(meter)


def tap(listener: Listener, *, scope: Scope) -> Listener:
    """`listener`, with each event noted by the running turn's meter on the way (the scope is noted now)."""
    meter = _meter.get()
    if meter is None:
        return listener
    meter.scope = scope

    async def noted(event: TurnEvent) -> None:
        meter.step(event)
        await listener(event)

    return noted


def answered(answer: Answer) -> None:
    meter = _meter.get()
    if meter is not None:
        meter.answer = answer


def failed(error: BaseException) -> None:
    meter = _meter.get()
    if meter is not None:
        meter.error = error


def _emit(meter: TurnMeter) -> None:
    try:
        record = meter.record()
        log.info(record.line(), extra={"turn": record.fields()})
        metrics.turn_finished(record.figures())
    except Exception:  # a broken record must never break a turn that already answered
        log.exception("could not record the turn")


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)
