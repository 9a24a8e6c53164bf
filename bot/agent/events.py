"""What a turn reports while it runs, for the surface showing it (Slack task cards, the terminal's status line).

    Step(id="search-2", kind="search", title="Searching: payment terms Acme", status="started")
    Step(id="search-2", kind="search", title=..., status="done", detail="3 sources", sources=(("S1", chunk), ...))
    ResponseCreated(response_id="resp_...")     # the moment the model returns a response, before anything else

    AnswerText(text="Refunds within 14 days", draft=1)     # answer text as the model writes it (when streamed)
    AnswerText(citation=Citation(label=1, ...), draft=1)   # a marker already checked against the shown sources
    ModelCalled(profile="fast", outcome="ok", seconds=0.8)  # one Responses API call ended (for the turn's record)

A step is reported when it starts and again when it ends, under the same id. Answer text is reported only when the
turn streams (`run_turn(..., stream=True)`); its citations are checked before it is reported, so an unknown or
half-written marker never reaches a surface. `draft` counts the model calls that wrote text: a new draft means the
text before it was not the answer (a preamble before tool calls). Listeners are awaited in the turn's own task, so
a slow one slows the turn: surfaces batch and rate-limit on their side.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from bot.models import Chunk, Citation

StepKind = Literal["rewrite", "search", "calculate", "write"]
StepStatus = Literal["started", "done", "failed"]


@dataclass(frozen=True)
class Step:
    """One step of a turn, as it starts or ends."""

    id: str  # stable within the turn: the started and the done report of one step share it
    kind: StepKind
    title: str  # what a person reads: "Searching: payment terms Acme"
    status: StepStatus = "started"
    detail: str = ""  # the rewritten question, "3 sources", the code's output
    sources: tuple[tuple[str, Chunk], ...] = ()  # (S#, passage) newly shown by a search


@dataclass(frozen=True)
class ResponseCreated:
    """The model service created (and stores) a response. Keep its id at once: deleting the conversation must reach
    it even when the turn then times out, fails or its answer is never posted."""

    response_id: str


@dataclass(frozen=True)
class AnswerText:
    """A piece of the answer as the model writes it: plain text, or one checked citation shown as its label."""

    text: str = ""
    citation: Citation | None = None
    draft: int = 1


@dataclass(frozen=True)
class ModelCalled:
    """One Responses API call ended: how long it took and how it ended ("ok", or the kind of error). Nothing a person
    sees; the turn's observer counts it."""

    profile: str
    outcome: str
    seconds: float
    model: str = ""
    input_tokens: int = 0  # what the service reported for this call (0 when it failed or reported none)
    cached_tokens: int = 0
    output_tokens: int = 0


TurnEvent = Step | ResponseCreated | AnswerText | ModelCalled
Listener = Callable[[TurnEvent], Awaitable[None]]


async def ignore(_: TurnEvent) -> None:
    """The listener of a turn nobody watches."""
    return None


@dataclass
class StepIds:
    """Hands out step ids: `search-1`, `search-2`, ..."""

    _counter: itertools.count = field(default_factory=lambda: itertools.count(1))

    def next(self, kind: StepKind) -> str:
        return f"{kind}-{next(self._counter)}"
