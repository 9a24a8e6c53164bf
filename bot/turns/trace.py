"""The trace of one turn, for an admin asking "Why this answer?": each model call (profile, model, tokens, latency),
each step and tool call with its arguments (the rewritten question, the search queries and filters), the sources
each search returned (file, page, score, container), which sources the answer cited, which citation markers the
check removed and why, and the fallbacks taken.

`TraceBuilder` gathers it from the turn's hooks (the one recorder, `bot.turns.observer.TurnRecorder`, feeds it); `Trace` is the
JSON-ready value stored beside the conversation (`bot.store.traces`) and shown by `folio trace` and the Slack modal
(`lines()`). The question and the answer are in it only for turns in a channel, whose members saw them anyway;
a direct message's trace keeps the searches but not the words. In Slack, an admin reads a channel trace's words only
where they can read the conversation themselves (`without_words`, bot.slack.why); the terminal is the operator's.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

from bot.agent.events import ModelCalled, Step
from bot.models import Answer, display_name, utc_now

_TS = re.compile(r"^\d{9,}\.\d{6}$")
_LINK_TS = re.compile(r"/archives/([A-Z0-9]+)/p(\d{10,})")
REMOVED_WHY = "named no source the model was shown"
ANSWERED = frozenset({"answered", "not_answered", "search_only"})  # the outcomes that add a turn to the thread


@dataclass(frozen=True)
class TraceSource:
    label: str  # S1, S2, ... as the model saw it
    file: str
    page: int | None
    score: float
    container: str


@dataclass
class TraceStep:
    kind: str  # model, rewrite, search, calculate, write
    title: str  # "Searching: payment terms Acme", or the model and profile of a call
    ms: int = 0
    status: str = "done"
    detail: str = ""
    tokens: tuple[int, int, int] | None = None  # a model call's (input, cached, output)
    sources: list[TraceSource] = field(default_factory=list)


@dataclass
class Trace:
    at: str
    workspace: str
    channel: str
    thread_ts: str
    user: str
    profile: str = "fast"
    outcome: str = "unknown"
    steps: list[TraceStep] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {name, arguments, summary}
    cited: list[str] = field(default_factory=list)  # "[1] handbook.pdf p. 4"
    removed: list[str] = field(default_factory=list)  # "[S9]: named no source the model was shown"
    fallbacks: list[str] = field(default_factory=list)
    question: str | None = None
    answer: str | None = None
    trigger: str | None = None  # a watch note's re-answer: which change triggered it (and the note's id)

    def to_json(self) -> str:
        # by hand rather than dataclasses.asdict, which deep-copies every value (a tenth of a millisecond a turn)
        data = dict(vars(self))
        data["steps"] = [{**vars(step), "sources": [vars(source) for source in step.sources]} for step in self.steps]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> Trace:
        data = json.loads(text)
        steps = [
            TraceStep(
                **{
                    **step,
                    "sources": [TraceSource(**s) for s in step["sources"]],
                    "tokens": tuple(step["tokens"]) if step["tokens"] else None,
                }
            )
            for step in data.pop("steps")
        ]
        return cls(**data, steps=steps)

    def has_words(self) -> bool:
        """Whether the trace holds the question or the answer (a channel turn's)."""
        return self.question is not None or self.answer is not None

    def without_words(self) -> Trace:
        """The trace without the question and the answer, for a reader who cannot see the conversation: the DM
        rule. The steps and tool calls stay, search queries and the rewritten question included, though they may
        repeat some of the asker's words: they are what was searched for, without which the sources, scores and
        removed citations (what an admin asks "why" about) cannot be read, and a DM's trace keeps them alike."""
        return dataclasses.replace(self, question=None, answer=None)

    def lines(self) -> list[str]:
        """The trace as plain lines (the terminal and the Slack modal show these)."""
        out = [f"turn at {self.at} by {self.user} in {self.channel}: {self.outcome}, profile {self.profile}"]
        if self.trigger:
            out.append(f"triggered by: {self.trigger}")
        if self.question is not None:
            out.append(f"question: {self.question}")
        for step in self.steps:
            tokens = _tokens(step.tokens)
            failed = " FAILED" if step.status == "failed" else ""
            out.append(f"- {step.kind}: {step.title}{failed} ({step.ms} ms){tokens}")
            out += [
                f"    {s.label} {display_name(s.file)} p. {s.page if s.page is not None else '-'} score {s.score:.3f} "
                f"[{s.container}]"
                for s in step.sources
            ]
        for call in self.tool_calls:
            out.append(
                f"- tool {call['name']} {json.dumps(call['arguments'], ensure_ascii=False)}"
                + (f": {call['summary']}" if call.get("summary") else "")
            )
        out.append("cited: " + ("; ".join(self.cited) or "none"))
        out.append("removed citations: " + ("; ".join(self.removed) or "none"))
        out.append("fallbacks: " + ("; ".join(self.fallbacks) or "none"))
        if self.answer is not None:
            out.append(f"answer: {self.answer}")
        return out


@dataclass
class TraceBuilder:
    """Builds a turn's `Trace` from its events and its answer."""

    trace: Trace
    with_text: bool  # a channel turn: its question and answer were visible there anyway
    _open: dict[str, TraceStep] = field(default_factory=dict)

    def model_called(self, event: ModelCalled) -> None:
        self.trace.steps.append(
            TraceStep(
                kind="model",
                title=f"{event.model or '?'} ({event.profile})",
                ms=round(event.seconds * 1000),
                status="done" if event.outcome == "ok" else "failed",
                detail=event.outcome,
                tokens=(event.input_tokens, event.cached_tokens, event.output_tokens),
            )
        )

    def step(self, event: Step, seconds: float) -> None:
        """A step started (`seconds` 0) or ended (`seconds` since it started)."""
        if event.status == "started":
            self._open[event.id] = step = TraceStep(kind=event.kind, title=event.title, status="started")
            self.trace.steps.append(step)
            return
        opened = self._open.pop(event.id, None)
        step = opened or TraceStep(kind=event.kind, title=event.title)
        if step not in self.trace.steps:
            self.trace.steps.append(step)
        step.status, step.detail, step.ms = event.status, event.detail, round(seconds * 1000)
        step.sources = [
            TraceSource(label, chunk.file, chunk.page, round(chunk.score, 4), chunk.container)
            for label, chunk in event.sources
        ]

    def answered(self, answer: Answer, question: str) -> None:
        trace = self.trace
        trace.profile = answer.profile
        trace.tool_calls = [
            {"name": call.name, "arguments": dict(call.arguments), "summary": call.summary}
            for call in answer.tool_calls
        ]
        trace.cited = [
            f"[{c.label}] {display_name(c.file)}" + (f" p. {c.page}" if c.page is not None else "")
            for c in answer.citations
        ]
        trace.removed = [f"[{marker}]: {REMOVED_WHY}" for marker in answer.removed_markers]
        trace.fallbacks = list(answer.notices)
        if answer.mode == "search_only":
            trace.fallbacks.insert(0, "search-only answer (quoted passages): no model answer")
        if answer.cap_hit:
            trace.fallbacks.append("the step limit was reached")
        if self.with_text:
            trace.question, trace.answer = question, answer.text

    def finish(self, outcome: str) -> Trace:
        self.trace.outcome = outcome
        return self.trace


def _tokens(tokens: tuple[int, int, int] | None) -> str:
    return f" tokens {tokens[0]} in ({tokens[1]} cached) / {tokens[2]} out" if tokens else ""


def new_trace(*, workspace: str, channel: str, thread_ts: str, user: str, trigger: str | None = None) -> Trace:
    return Trace(at=utc_now(), workspace=workspace, channel=channel, thread_ts=thread_ts, user=user, trigger=trigger)


def thread_in(text: str) -> tuple[str | None, str] | None:
    """(channel or None, thread ts) from a Slack message link (Copy link; a reply's names its thread) or a bare ts;
    None for anything else. `folio trace` and an admin's Home tab read what they are given by this one rule."""
    text = text.strip()
    if _TS.match(text):
        return None, text
    match = _LINK_TS.search(urlparse(text).path)
    if match is None:
        return None
    root = parse_qs(urlparse(text).query).get("thread_ts")
    digits = match.group(2)
    return match.group(1), root[0] if root else f"{digits[:-6]}.{digits[-6:]}"
