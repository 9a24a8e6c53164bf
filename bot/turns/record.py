"""The one record of a turn: where and for whom, with what, what it did, how long each phase took, how it ended.

`bot.turns.observer.TurnRecorder` builds it as the turn runs; it becomes the `turn` log line and the metrics. The
question, the answer and the search queries are in it only with FOLIO_LOG_CONTENT=true.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from dataclasses import asdict, dataclass
from typing import Any

from bot import metrics
from bot.agent.provider_errors import outcome as error_kind
from bot.errors import FolioError
from bot.models import Answer


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
    surface: str = "slack"  # slack, mcp, terminal

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
            f"outcome={self.outcome}",
            f"profile={self.profile}",
            f"workspace={self.workspace}",
            f"channel={self.channel}",
            f"thread={self.thread}",
            f"user={self.user}",
            f"scope={'|'.join(self.containers) or '-'}",
            f"tags={'|'.join(self.tags) or '-'}",
            f"model_calls={self.model_calls}",
            f"searches={searches}",
            f"shown={self.sources_shown}",
            f"cited={self.sources_cited}",
            f"removed={self.citations_removed}",
            f"tokens={self.input_tokens}/{self.output_tokens}",
            f"ms={phases}",
            f"surface={self.surface}",
        ]
        if self.question is not None:
            parts.append(f"question={self.question!r}")
        if self.answer is not None:
            parts.append(f"answer={self.answer!r}")
        return "turn " + " ".join(parts)

    def figures(self) -> metrics.TurnFigures:
        return metrics.TurnFigures(
            outcome=self.outcome,
            profile=self.profile,
            seconds=self.phases.total,
            first_feedback=self.phases.first_feedback,
            searches=tuple((search.seconds, search.failed) for search in self.searches),
            citations_removed=self.citations_removed,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            surface=self.surface,
        )


def outcome_of(answer: Answer | None, error: BaseException | None) -> str:
    """answered, not_answered, search_only; or what failed: model_misconfigured, timeout, slack_error, ..."""
    if isinstance(error, asyncio.CancelledError):
        return "cancelled"
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, FolioError):
        return error_kind(error)
    if _is_slack_error(error):
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


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def _is_slack_error(error: BaseException | None) -> bool:
    """A Slack Web API error, without importing slack_sdk where no Slack client ever ran (the terminal's turns)."""
    errors = sys.modules.get("slack_sdk.errors")
    return errors is not None and isinstance(error, errors.SlackApiError)
