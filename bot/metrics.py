"""What Folio measures: Prometheus metrics for the whole process.

    metrics.model_call("fast", "ok", 0.8)     # a counter and a histogram
    body, content_type = metrics.exposition()  # what GET /metrics serves

Like `logging`, any module may record here; this one imports nothing of ours. Metrics are module-level, as
prometheus-client intends. With PROMETHEUS_MULTIPROC_DIR set (prometheus-client's own switch, read by the library
when it is imported) every process writes its samples to files there and `exposition()` adds them up, so several
`folio serve` processes behind one port report as one.

What one turn spent where is not kept here: the turn's observer (`bot.turns.observer.TurnRecorder`) is handed each
part by the turn itself, and adds the finished turn with `turn_finished`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

# Seconds. A turn is mostly model time (one to tens of seconds); feedback and lock waits should be well under one.
TURN_BUCKETS = (0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300)
FAST_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30)
CALL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60)

TURNS = Counter("folio_turns", "Turns finished, by outcome and answer profile", ["outcome", "profile"])
TURN_SECONDS = Histogram(
    "folio_turn_seconds", "Time from a question to its answer (or failure)", ["profile"], buckets=TURN_BUCKETS
)
FIRST_FEEDBACK_SECONDS = Histogram(
    "folio_first_feedback_seconds", "Time from a question to the first thing the thread shows", buckets=FAST_BUCKETS
)
MODEL_CALLS = Counter("folio_model_calls", "Responses API calls, by profile and outcome", ["profile", "outcome"])
MODEL_SECONDS = Histogram(
    "folio_model_call_seconds", "Time one Responses API call took", ["profile"], buckets=CALL_BUCKETS
)
TOKENS = Counter(
    "folio_tokens",
    "Model tokens, by direction (input, output; cached: the part of input served from the provider's prompt cache)",
    ["direction"],
)
SEARCHES = Counter("folio_searches", "Searches the agent ran, by outcome (ok, failed)", ["outcome"])
SEARCH_SECONDS = Histogram("folio_search_seconds", "Time one search took", buckets=FAST_BUCKETS)
CITATIONS_REMOVED = Counter("folio_citations_removed", "Citation markers removed because they named no shown source")
SLACK_ERRORS = Counter(
    "folio_slack_api_errors", "Slack Web API calls that failed, by method and error", ["method", "error"]
)
DUPLICATES = Counter("folio_duplicate_deliveries", "Repeated deliveries dropped (Slack retries, twin events)", ["kind"])
SURFACE_TURNS = Counter(
    "folio_surface_turns", "Turns finished, by surface (slack, mcp, terminal) and outcome", ["surface", "outcome"]
)
MCP_CALLS = Counter(
    "folio_mcp_calls", "MCP tool calls, by tool and outcome (ok, refused, invalid, failed)", ["tool", "outcome"]
)
MCP_AUTH = Counter(
    "folio_mcp_auth", "MCP requests by how the bearer token was taken (folio, oidc, refused)", ["result"]
)
LOCK_WAIT_SECONDS = Histogram(
    "folio_lock_wait_seconds", "Time a turn waited for its thread's lock", buckets=FAST_BUCKETS + (60, 120)
)
WAITING_FOR_ADMISSION = Gauge(
    "folio_turns_waiting_for_admission",
    "Turns waiting for the busy event loop to let them start",
    multiprocess_mode="livesum",
)


def model_call(profile: str, outcome: str, seconds: float) -> None:
    """One Responses API call ended (`outcome` is "ok" or the kind of error)."""
    MODEL_CALLS.labels(profile, outcome).inc()
    MODEL_SECONDS.labels(profile).observe(seconds)


def slack_call(method: str, error: str | None) -> None:
    """One Web API call ended; `error` is Slack's error code (or "connection") when it failed."""
    if error is not None:
        SLACK_ERRORS.labels(method, error).inc()


def lock_waited(seconds: float) -> None:
    """A turn got its thread's lock after `seconds`."""
    LOCK_WAIT_SECONDS.observe(seconds)


@contextmanager
def waiting_for_admission() -> Iterator[None]:
    """Count a turn as waiting for admission while the block runs."""
    with WAITING_FOR_ADMISSION.track_inprogress():
        yield


def duplicate_dropped(kind: str) -> None:
    """A repeated delivery (`message` or `trigger`) was dropped."""
    DUPLICATES.labels(kind).inc()


@dataclass(frozen=True)
class TurnFigures:
    """What a finished turn adds to the metrics (`bot.turns.record.TurnRecord.figures`)."""

    outcome: str
    profile: str
    seconds: float
    first_feedback: float | None
    searches: tuple[tuple[float, bool], ...]  # (seconds, failed) of each search
    citations_removed: int
    input_tokens: int
    output_tokens: int
    surface: str = "slack"


def turn_finished(figures: TurnFigures) -> None:
    TURNS.labels(figures.outcome, figures.profile).inc()
    SURFACE_TURNS.labels(figures.surface, figures.outcome).inc()
    TURN_SECONDS.labels(figures.profile).observe(figures.seconds)
    if figures.first_feedback is not None:
        FIRST_FEEDBACK_SECONDS.observe(figures.first_feedback)
    for seconds, failed in figures.searches:
        SEARCHES.labels("failed" if failed else "ok").inc()
        SEARCH_SECONDS.observe(seconds)
    CITATIONS_REMOVED.inc(figures.citations_removed)
    TOKENS.labels("input").inc(figures.input_tokens)
    TOKENS.labels("output").inc(figures.output_tokens)


def mcp_call(tool: str, outcome: str) -> None:
    """One MCP tool call ended: ok, refused (scope, budget, outsider), invalid (bad input) or failed."""
    MCP_CALLS.labels(tool, outcome).inc()


def mcp_auth(result: str) -> None:
    """A bearer token was taken (`folio`, `oidc`) or refused (`refused`)."""
    MCP_AUTH.labels(result).inc()


def cached_tokens(count: int) -> None:
    """Input tokens of a finished turn that the provider served from its prompt cache (part of `input`)."""
    TOKENS.labels("cached").inc(count)


def exposition() -> tuple[bytes, str]:
    """The current metrics in Prometheus' text format, and its content type."""
    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # the library's switch (see the module docstring)
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry), CONTENT_TYPE_LATEST


# Sources (`folio sync`): each source's files by state after its last run, and when it last listed whole.
SOURCE_FILES = Gauge(
    "folio_source_files",
    "Files of each source after its last sync, by state",
    ["source", "state"],
    multiprocess_mode="livemax",
)
SOURCE_LAST_SUCCESS = Gauge(
    "folio_source_last_success_timestamp_seconds",
    "When each source was last listed whole (Unix time)",
    ["source"],
    multiprocess_mode="livemax",
)
SOURCE_STATES = ("files", "indexed", "unchanged", "unreadable", "removed", "skipped")


def source_synced(source: str, *, counts: tuple[int, ...], last_success: float | None) -> None:
    """A sync of `source` ended: `counts` in the order of SOURCE_STATES."""
    for state, count in zip(SOURCE_STATES, counts):
        SOURCE_FILES.labels(source, state).set(count)
    if last_success is not None:
        SOURCE_LAST_SUCCESS.labels(source).set(last_success)


# Watch: documents changed -> threads checked -> notes found and posted
WATCH = Counter(
    "folio_watch",
    "The watch's work: documents changed or removed, threads checked, notes found, notes posted",
    ["what"],
)


def count_watch(documents: int, threads: int, notes: int, posted: int) -> None:
    """Add one run of the watch."""
    for what, count in (("documents", documents), ("threads", threads), ("notes", notes), ("posted", posted)):
        WATCH.labels(what).inc(count)
