"""One turn of the agent: the Responses API tool loop, bounded, with every citation checked before it is shown.

first call (question, chained by previous_response_id or rebuilt from history)
  -> while the response asks for tools and calls remain: run the batch, send one output per call_id
  -> the last allowed call may not call tools (tool_choice="none"): the model answers from what it has
  -> one correction round when the answer cites unknown sources or nothing at all
  -> citations rendered; what still fails is removed

Each model call (its request, chaining or resending, its recorded response) is bot.agent.model_calls'; the turn's
mutable state is bot.agent.turn_state's TurnState.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot import messages
from bot.agent import prompts
from bot.agent.events import Step, ignore
from bot.agent.fallback import quoted_answer, search_only
from bot.agent.history import history_items, trimmed_history_items
from bot.agent.model_calls import call_model, earlier, keep_items, user
from bot.agent.options import AgentOptions, RunOptions
from bot.agent.sources import TurnSources
from bot.agent.tools import CODE, DocumentReader, ToolContext, run_batch
from bot.agent.turn_state import TurnState
from bot.agent.verify import unsupported_labels
from bot.agent.wire import ModelReply
from bot.citations import (
    Rendered,
    needs_correction,
    render,
    says_not_answered,
    unknown_refs,
    written_by_documents,
)
from bot.errors import ContextTooLong, HistoryExpired, InvalidInput, ModelUnavailable
from bot.models import Answer, Chunk, Conversation

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from bot.retrieval import Retriever

log = logging.getLogger(__name__)
content_log = logging.getLogger("folio.content")  # silent unless FOLIO_LOG_CONTENT (bot.logs)


async def run_turn(
    question: str,
    conversation: Conversation,
    *,
    model: AsyncOpenAI | None,
    retriever: Retriever,
    options: AgentOptions,
    reader: DocumentReader | None = None,
    run: RunOptions | None = None,
) -> Answer:
    """Answer one question of `conversation`, adding the sources it shows; the caller records the turn and saves it.

    `run`: the profile, who hears each step (see `bot.agent.events`) and, with `stream`, also the answer's text as
    the model writes it (the returned Answer is still the one to show: it may differ from that text).
    `reader`: the files shared in the thread, read whole by the read_document tool (offered only with it)."""
    run = run or RunOptions()
    question = question.strip()
    if not question:
        raise InvalidInput(messages.EMPTY_QUESTION)
    profile = run.profile or conversation.profile
    set_aside = conversation.tell_set_aside()  # earlier answers relied on a document removed or out of scope
    if model is None:
        answer = await search_only(
            question, conversation, retriever=retriever, options=options, notice=messages.NO_MODEL, profile=profile
        )
        return _telling(answer, set_aside)
    sources = TurnSources(conversation, budget=options.chunk_budget)
    tools = ToolContext(
        question, conversation.scope, retriever, sources, options.search_top, run.events or ignore, reader=reader
    )
    turn = TurnState(question, conversation, model, options, profile, tools, stream=run.stream)
    try:
        answer = await _answer(turn)
    except (ModelUnavailable, HistoryExpired) as exc:  # HistoryExpired here: a response of this very turn vanished
        log.warning("model unavailable, answering search-only: %s", exc)
        fallback = await search_only(
            question, conversation, retriever=retriever, options=options, notice=messages.MODEL_DOWN, profile=profile
        )
        answer = turn.charged(fallback)
    _log_trace(turn, answer)
    return _telling(answer, set_aside)


def _telling(answer: Answer, set_aside: bool) -> Answer:
    """`answer`, saying first that earlier answers of the thread were set aside, when they were."""
    if not set_aside:
        return answer
    return answer.model_copy(update={"notices": (messages.EARLIER_ANSWERS_FORGOTTEN, *answer.notices)})


async def _answer(turn: TurnState) -> Answer:
    response = await _loop(turn, await _start(turn))
    if response.function_calls:  # still asking for tools after the last allowed call
        shown = [(ref, turn.conversation.sources[ref]) for ref in turn.tools.sources.shown.values()]
        notices = (*turn.notices, messages.CAP_HIT)
        return turn.charged(quoted_answer(shown, options=turn.options, notices=notices, profile=turn.profile))
    text, final_id = await _corrected(turn, response)
    return await _finish(turn, text, final_id)


async def _start(turn: TurnState) -> ModelReply:
    """The first call; when the thread has outgrown the context window, once more without its oldest turns."""
    try:
        return await _first_call(turn)
    except ContextTooLong:
        turn.notices.append(messages.HISTORY_TRIMMED)
        turn.earlier_dropped = True
        turn.restated = turn.options.model_state.stateless
        trimmed = trimmed_history_items(turn.conversation.turns, outputs=turn.restated)
        return await call_model(turn, input=trimmed + [user(turn.question)])


async def _first_call(turn: TurnState) -> ModelReply:
    """The first call: chained to the conversation, or rebuilt from its turns when the provider forgot it, or (for a
    service that keeps no responses) the thread's kept items resent."""
    asked = [user(turn.question)]
    conversation = turn.conversation
    state = turn.options.model_state
    if state.stateless:
        return await call_model(turn, input=earlier(turn) + asked)
    if conversation.last_response_id:
        # Resent instead, should the service turn out to keep no responses (auto mode only: server never switches).
        turn.context = earlier(turn) if state.mode == "auto" else []
        turn.asked_at = len(turn.context)
        for attempt in (1, 2):  # a just-created response can be briefly unknown to another region: retry once
            try:
                return await call_model(turn, input=asked, previous_response_id=conversation.last_response_id)
            except HistoryExpired:
                log.info("previous response %s not found (attempt %d)", conversation.last_response_id, attempt)
        turn.notices.append(messages.HISTORY_RESTORED if conversation.turns else messages.HISTORY_EXPIRED)
        turn.restated = False  # restated below in the chaining form, which is not kept
    history = history_items(conversation.turns) if conversation.turns else []
    return await call_model(turn, input=history + asked)


async def _loop(turn: TurnState, response: ModelReply) -> ModelReply:
    """Run tool batches until the model answers or the call limit is reached."""
    made = 1
    while (calls := list(response.function_calls)) and made < turn.options.max_iterations:
        batch = await run_batch(calls, turn.tools)
        turn.tool_calls.extend(batch.calls)
        turn.trace.extend(batch.trace)
        last = made + 1 >= turn.options.max_iterations
        if last:  # the final call may not ask for more: the model answers from what was gathered
            turn.cap_hit = True
            log.warning("turn reached its limit of %d model calls", turn.options.max_iterations)
        await turn.tools.events(Step(turn.tools.step_ids.next("write"), "write", messages.PROGRESS_WRITE))
        response = await call_model(
            turn, input=batch.outputs, previous_response_id=response.id, tool_choice="none" if last else "auto"
        )
        made += 1
    if response.function_calls:
        turn.cap_hit = True
    return response


async def _corrected(turn: TurnState, response: ModelReply) -> tuple[str, str]:
    """The answer text and final response id, after one correction round when its citations fail."""
    text = response.output_text
    known = turn.conversation.sources
    if not needs_correction(text, known, sources_shown=bool(known)):
        return text, response.id
    unknown = unknown_refs(text, known)
    problem = prompts.note("unknown_markers", refs=", ".join(unknown)) if unknown else prompts.note("no_markers")
    log.info("asking for a correction: %s", problem)
    request = prompts.fill("correction", problem=problem, refs=", ".join(known) or "(none)")
    try:
        corrected = await call_model(
            turn, input=[user(request)], previous_response_id=response.id, tool_choice="none", may_answer=False
        )
    except (ModelUnavailable, HistoryExpired) as exc:  # keep the first answer; its bad markers are removed below
        log.warning("correction round failed: %s", exc)
        return text, response.id
    return corrected.output_text, corrected.id


async def _finish(turn: TurnState, text: str, final_id: str) -> Answer:
    known = turn.conversation.sources
    rendered = render(text, known, link_for=turn.options.link_for)
    if rendered.dropped:
        log.warning("removed markers naming no shown source: %s", ", ".join(rendered.dropped))
    answerable = bool(rendered.citations) and not says_not_answered(text)
    notices = list(turn.notices)
    body = rendered.text
    if not answerable and body:  # the model's own words say what is missing; the notice says it plainly
        notices.append(messages.NOT_IN_DOCUMENTS)
    body = body or messages.NOT_IN_DOCUMENTS
    flagged = _labels_of(written_by_documents(text, known), rendered, known)
    if turn.options.verify_citations and rendered.citations:
        flagged += await unsupported_labels(turn, rendered, known)
    if flagged:
        log.warning("citations not confirmed: %s", flagged)
        notices.append(messages.unverified(sorted(set(flagged))))
    if turn.cap_hit:
        notices.append(messages.CAP_HIT)
    keep_items(turn)
    answer = Answer(
        text=body,
        citations=rendered.citations,
        markers=rendered.markers,
        removed_markers=rendered.dropped,
        answerable=answerable,
        notices=tuple(notices),
        final_response_id=final_id,
        profile=turn.profile,
    )
    return turn.charged(answer)


def _labels_of(refs: list[str], rendered: Rendered, known: Mapping[str, Chunk]) -> list[int]:
    """The labels the citations of these sources show under."""
    pages = {(known[ref].file, known[ref].cited_page) for ref in refs}
    return [c.label for c in rendered.citations if (c.file, c.page) in pages]


def _log_trace(turn: TurnState, answer: Answer) -> None:
    for number, step in enumerate(turn.trace, 1):
        refs = ",".join(step.refs)
        note = "" if step.tool == CODE else step.note  # a code run's note is what it printed: content
        log.debug("turn step %d %s sources=%s %s", number, step.tool, refs, note)
        if step.query or note != step.note:  # queries and code quote the question: only with FOLIO_LOG_CONTENT
            content_log.debug("turn step %d %s query=%r %s", number, step.tool, step.query, step.note)
    log.debug(  # the per-turn record (bot.turns.observer) is the INFO line; this trace holds search queries
        "turn done: mode=%s %d model calls, %d tool calls, %d+%d tokens, %d citations, cap_hit=%s",
        answer.mode,
        answer.model_calls,
        len(answer.tool_calls),
        answer.usage.input_tokens,
        answer.usage.output_tokens,
        len(answer.citations),
        answer.cap_hit,
    )
