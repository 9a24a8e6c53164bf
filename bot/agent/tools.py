"""Running one batch of the model's function calls: rewrite_query and search_documents.

A tool failure becomes the tool's output, never a crash; the model decides what to do with it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from bot import messages
from bot.agent import prompts
from bot.agent.calls import FunctionCall
from bot.agent.events import Listener, Step, StepIds
from bot.agent.sources import TurnSources, search_output
from bot.errors import FolioError
from bot.models import Chunk, Scope, ToolCall

if TYPE_CHECKING:
    from bot.retrieval import Retriever

log = logging.getLogger(__name__)

REWRITE = "rewrite_query"
SEARCH = "search_documents"
READ = prompts.READ
CODE = "code_interpreter"  # run by the model service itself; Folio only records it


@dataclass(frozen=True)
class TraceStep:
    """What one tool call did, for the turn's log: the query, the sources it showed, the model call's tokens."""

    tool: str
    query: str = ""
    refs: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class ToolResult:
    """What one function call gave: the output the model reads, the record the user sees, the step the log keeps."""

    output: str
    call: ToolCall
    trace: TraceStep


@dataclass
class Batch:
    """The outcome of one batch: a function_call_output per call_id, plus what the user and the log see."""

    outputs: list[dict[str, str]] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)

    def add(self, call_id: str, result: ToolResult) -> None:
        self.outputs.append({"type": "function_call_output", "call_id": call_id, "output": result.output})
        self.calls.append(result.call)
        self.trace.append(result.trace)


class DocumentReader(Protocol):
    """The files shared in a thread, read whole: by the name people know each, its passages in reading order."""

    @property
    def titles(self) -> tuple[str, ...]: ...

    async def read(self, title: str) -> list[Chunk] | None:
        """The file's passages, page by page; None when no file of the thread has that name."""


@dataclass(frozen=True)
class ToolContext:
    """What the tools of one turn work with."""

    question: str
    scope: Scope
    retriever: Retriever
    sources: TurnSources
    top: int
    events: Listener
    step_ids: StepIds = field(default_factory=StepIds)
    reader: DocumentReader | None = None  # reads a file shared in the thread whole (None: no such file)


async def run_batch(calls: list[FunctionCall], context: ToolContext) -> Batch:
    """Run every call of one response, answering each call_id exactly once, in the order the model made them."""
    done: dict[str, ToolResult] = {}
    rewritten = None
    for tool_call in (c for c in calls if c.name == REWRITE):
        step = Step(context.step_ids.next("rewrite"), "rewrite", messages.PROGRESS_REWRITE)
        await context.events(step)
        result = done[tool_call.call_id] = _rewrite(tool_call)
        rewritten = result.trace.query or rewritten
        failed = not result.trace.query
        await context.events(replace(step, status="failed" if failed else "done", detail=rewritten or ""))
    for tool_call in (c for c in calls if c.name == READ):
        done[tool_call.call_id] = await _read(tool_call, context)
    searches = [c for c in calls if c.name == SEARCH]
    substitute = _safety_net(rewritten, searches, context.question)
    found = await asyncio.gather(*(_search(c, context, substitute) for c in searches))
    for tool_call, hits in zip(searches, found):  # admitted in call order, so S# ids follow it
        done[tool_call.call_id] = await _show(tool_call, hits, context)
    batch = Batch()
    for tool_call in calls:
        batch.add(tool_call.call_id, done.get(tool_call.call_id) or _unknown(tool_call))
    return batch


def _rewrite(tool_call: FunctionCall) -> ToolResult:
    """The backend's side of rewrite_query: echo the corrected question, which the model then searches with."""
    try:
        rewritten = tool_call.query()
    except ValueError as exc:
        record = ToolCall(name=REWRITE, arguments=tool_call.recorded(), summary="invalid arguments")
        return ToolResult(prompts.note("bad_arguments", reason=str(exc)), record, TraceStep(REWRITE))
    record = ToolCall(name=REWRITE, arguments=tool_call.recorded(), summary="rewritten")
    return ToolResult(rewritten, record, TraceStep(REWRITE, rewritten))


def _unknown(tool_call: FunctionCall) -> ToolResult:
    name = tool_call.name[:100]
    record = ToolCall(name=name, arguments=tool_call.recorded(), summary="unknown tool")
    return ToolResult(prompts.note("unknown_tool", name=name), record, TraceStep(name))


def _safety_net(rewritten: str | None, searches: list[FunctionCall], question: str) -> str | None:
    """The rewritten question, when the only search of the batch still uses the user's own wording.

    Models sometimes rewrite and then search the original text in the same batch. With two or more searches the
    model has decomposed the question, and each part is its own query: nothing is substituted then.
    """
    if rewritten is None or len(searches) != 1:
        return None
    try:
        query = searches[0].query()
    except ValueError:
        return None
    return rewritten if _same_wording(query, question) and not _same_wording(rewritten, question) else None


def _same_wording(a: str, b: str) -> bool:
    def norm(text: str) -> str:
        return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())

    return norm(a) == norm(b)


@dataclass(frozen=True)
class _Found:
    query: str
    step: Step | None = None
    chunks: list[Chunk] | None = None
    failure: str = ""


async def _search(tool_call: FunctionCall, context: ToolContext, substitute: str | None) -> _Found:
    try:
        query = substitute or tool_call.query()
    except ValueError as exc:
        return _Found(query="", failure=prompts.note("bad_arguments", reason=str(exc)))
    step = Step(context.step_ids.next("search"), "search", messages.progress_search(query))
    await context.events(step)
    if not context.sources.remaining:  # no need to search: nothing more may be shown
        return _Found(query=query, step=step, chunks=[])
    try:
        chunks = await context.retriever.search(query, context.scope, top=context.top)
    except FolioError as exc:  # search is down or refused the query: tell the model, let it answer
        log.warning("search failed: %s", exc)  # not its query: the asker's words (the DEBUG trace shows it)
        return _Found(query=query, step=step, failure=prompts.note("search_failed", reason=str(exc)))
    return _Found(query=query, step=step, chunks=chunks)


async def _show(tool_call: FunctionCall, found: _Found, context: ToolContext) -> ToolResult:
    """The search's output for the model: new sources, or a note why there are none."""
    arguments = tool_call.recorded()
    if found.chunks is None:
        if found.step is not None:
            await context.events(replace(found.step, status="failed", detail=messages.STEP_SEARCH_FAILED))
        record = ToolCall(name=SEARCH, arguments=arguments, summary="failed")
        return ToolResult(found.failure, record, TraceStep(SEARCH, found.query))
    admitted = context.sources.admit(found.chunks)
    if found.step is not None:
        detail = messages.step_sources(len(admitted.shown), len(admitted.repeated))
        await context.events(replace(found.step, status="done", detail=detail, sources=admitted.shown))
    notes = []
    if admitted.repeated:
        notes.append(prompts.note("already_shown", refs=", ".join(admitted.repeated)))
    if not context.sources.remaining and (admitted.budget_spent or not found.chunks):
        notes.append(prompts.note("budget_spent", budget=context.sources.budget))
    elif not found.chunks:
        notes.append(prompts.note("no_results"))
    refs = tuple(ref for ref, _ in admitted.shown)
    summary = _summary(refs, admitted.repeated, admitted.budget_spent or not context.sources.remaining)
    if found.query != arguments.get("query"):
        summary += f"; searched the rewritten question {found.query!r}"
    step = TraceStep(SEARCH, found.query, refs, note=summary)
    record = ToolCall(name=SEARCH, arguments=arguments, summary=summary)
    return ToolResult(search_output(admitted.shown, notes), record, step)


async def _read(tool_call: FunctionCall, context: ToolContext) -> ToolResult:
    """read_document: a shared file's passages in reading order, admitted like search results (the budget holds)."""
    arguments = tool_call.recorded()
    try:
        title = str(tool_call.parsed().get("title") or "")[:300]
    except ValueError as exc:
        record = ToolCall(name=READ, arguments=arguments, summary="invalid arguments")
        return ToolResult(prompts.note("bad_arguments", reason=str(exc)), record, TraceStep(READ))
    chunks = await context.reader.read(title) if context.reader is not None and title else None
    if chunks is None:
        record = ToolCall(name=READ, arguments=arguments, summary="no such file")
        return ToolResult(prompts.note("no_such_file", title=title), record, TraceStep(READ, title))
    step = Step(context.step_ids.next("search"), "search", messages.progress_read(title))
    await context.events(step)
    admitted = context.sources.admit(chunks)
    await context.events(
        replace(step, status="done", detail=messages.step_sources(len(admitted.shown), 0), sources=admitted.shown)
    )
    notes = [prompts.note("budget_spent", budget=context.sources.budget)] if admitted.budget_spent else []
    refs = tuple(ref for ref, _ in admitted.shown)
    summary = _summary(refs, admitted.repeated, admitted.budget_spent)
    record = ToolCall(name=READ, arguments=arguments, summary=summary)
    return ToolResult(search_output(admitted.shown, notes), record, TraceStep(READ, title, refs, note=summary))


def _summary(refs: tuple[str, ...], repeated: tuple[str, ...], spent: bool) -> str:
    text = f"{len(refs)} sources" + (f" ({refs[0]}-{refs[-1]})" if refs else "")
    if repeated:
        text += f", {len(repeated)} already shown"
    return text + (", budget spent" if spent else "")
