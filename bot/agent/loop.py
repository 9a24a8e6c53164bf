"""One turn of the agent: the Responses API tool loop, bounded, with every citation checked before it is shown.

first call (question, chained by previous_response_id or rebuilt from history)
  -> while the response asks for tools and calls remain: run the batch, send one output per call_id
  -> the last allowed call may not call tools (tool_choice="none"): the model answers from what it has
  -> one correction round when the answer cites unknown sources or nothing at all
  -> citations rendered; what still fails is removed
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot import messages
from bot.agent import prompts
from bot.agent.calls import bounded
from bot.agent.events import Listener, ModelCalled, ResponseCreated, Step, ignore
from bot.agent.fallback import quoted_answer, search_only
from bot.agent.history import history_items, trimmed_history_items
from bot.agent.options import AgentOptions
from bot.agent.provider_errors import check_response, model_call
from bot.agent.sources import TurnSources
from bot.agent.state import bounded as bounded_items
from bot.agent.state import flattened
from bot.agent.streaming import AnswerWriter, calculation, create_streamed
from bot.agent.tools import CODE, ToolContext, TraceStep, run_batch
from bot.agent.verify import unsupported_labels
from bot.agent.wire import ModelReply, create, request_body
from bot.citations import (
    Rendered,
    needs_correction,
    render,
    says_not_answered,
    unknown_refs,
    written_by_documents,
)
from bot.errors import ContextTooLong, HistoryExpired, InvalidInput, KeepsNoResponses, ModelUnavailable
from bot.models import Answer, Chunk, Conversation, Profile, ToolCall, Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from bot.retrieval import Retriever

log = logging.getLogger(__name__)
content_log = logging.getLogger("folio.content")  # silent unless FOLIO_LOG_CONTENT (bot.logs)


@dataclass
class _Turn:
    """The mutable state of one turn."""

    question: str
    conversation: Conversation
    model: AsyncOpenAI
    options: AgentOptions
    profile: Profile
    tools: ToolContext
    response_ids: list[str] = field(default_factory=list)
    model_calls: int = 0  # calls that answered (a service told not to store leaves no id to count by)
    tool_calls: list[ToolCall] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    usage: Usage = Usage()
    cap_hit: bool = False
    stream: bool = False  # report the answer's text as it is written (AnswerText events)
    drafts: int = 0  # streamed model calls so far
    shown_code: set[str] = field(default_factory=set)  # code runs a streamed call reported as they ended
    # Everything the model has seen in this turn's chain (what a call resends when the service keeps no
    # responses, see bot.agent.state), and where this turn's question stands in it.
    context: list[dict[str, Any]] = field(default_factory=list)
    asked_at: int = 0
    earlier_dropped: bool = False  # the thread's earlier items were too long for the model: keep none of them
    restated: bool = False  # the chain began with the thread's turns restated (as output messages): keep those too

    def charged(self, answer: Answer) -> Answer:
        """`answer` with what this turn used: its tool calls, the responses it created, its model calls, its tokens,
        the cap."""
        spent = {"tool_calls": tuple(self.tool_calls), "response_ids": tuple(self.response_ids),
                 "model_calls": self.model_calls, "usage": self.usage, "cap_hit": self.cap_hit}  # fmt: skip
        return answer.model_copy(update=spent)


async def run_turn(
    question: str,
    conversation: Conversation,
    *,
    model: AsyncOpenAI | None,
    retriever: Retriever,
    options: AgentOptions,
    profile: Profile | None = None,
    events: Listener | None = None,
    stream: bool = False,
) -> Answer:
    """Answer one question of `conversation`, adding the sources it shows; the caller records the turn and saves it.

    `events` hears each step as it starts and ends (see `bot.agent.events`); with `stream`, also the answer's text,
    checked, as the model writes it (the returned Answer is still the one to show: it may differ from that text)."""
    question = question.strip()
    if not question:
        raise InvalidInput(messages.EMPTY_QUESTION)
    if len(question) > options.max_question_chars:
        raise InvalidInput(messages.question_too_long(len(question), limit=options.max_question_chars))
    profile = profile or conversation.profile
    set_aside = conversation.tell_set_aside()  # earlier answers relied on a document removed or out of scope
    if model is None:
        answer = await search_only(
            question, conversation, retriever=retriever, options=options, notice=messages.NO_MODEL, profile=profile
        )
        return _telling(answer, set_aside)
    sources = TurnSources(conversation, budget=options.chunk_budget)
    tools = ToolContext(question, conversation.scope, retriever, sources, options.search_top, events or ignore)
    turn = _Turn(question, conversation, model, options, profile, tools, stream=stream)
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


async def _answer(turn: _Turn) -> Answer:
    response = await _loop(turn, await _start(turn))
    if response.function_calls:  # still asking for tools after the last allowed call
        shown = [(ref, turn.conversation.sources[ref]) for ref in turn.tools.sources.shown.values()]
        notices = (*turn.notices, messages.CAP_HIT)
        return turn.charged(quoted_answer(shown, options=turn.options, notices=notices, profile=turn.profile))
    text, final_id = await _corrected(turn, response)
    return await _finish(turn, text, final_id)


async def _start(turn: _Turn) -> ModelReply:
    """The first call; when the thread has outgrown the context window, once more without its oldest turns."""
    try:
        return await _first_call(turn)
    except ContextTooLong:
        turn.notices.append(messages.HISTORY_TRIMMED)
        turn.earlier_dropped = True
        turn.restated = turn.options.model_state.stateless
        trimmed = trimmed_history_items(turn.conversation.turns, outputs=turn.restated)
        return await _create(turn, input=trimmed + [_user(turn.question)])


async def _first_call(turn: _Turn) -> ModelReply:
    """The first call: chained to the conversation, or rebuilt from its turns when the provider forgot it, or (for a
    service that keeps no responses) the thread's kept items resent."""
    asked = [_user(turn.question)]
    conversation = turn.conversation
    state = turn.options.model_state
    if state.stateless:
        return await _create(turn, input=_earlier(turn) + asked)
    if conversation.last_response_id:
        # Resent instead, should the service turn out to keep no responses (auto mode only: server never switches).
        turn.context = _earlier(turn) if state.mode == "auto" else []
        turn.asked_at = len(turn.context)
        for attempt in (1, 2):  # a just-created response can be briefly unknown to another region: retry once
            try:
                return await _create(turn, input=asked, previous_response_id=conversation.last_response_id)
            except HistoryExpired:
                log.info("previous response %s not found (attempt %d)", conversation.last_response_id, attempt)
        turn.notices.append(messages.HISTORY_RESTORED if conversation.turns else messages.HISTORY_EXPIRED)
        turn.restated = False  # restated below in the chaining form, which is not kept
    history = history_items(conversation.turns) if conversation.turns else []
    return await _create(turn, input=history + asked)


def _earlier(turn: _Turn) -> list[dict[str, Any]]:
    """The thread so far as input items: its kept items, else its turns restated (as output messages)."""
    conversation = turn.conversation
    if conversation.model_items:
        return flattened(conversation.model_items)
    turn.restated = bool(conversation.turns)
    return history_items(conversation.turns, outputs=True) if conversation.turns else []


async def _loop(turn: _Turn, response: ModelReply) -> ModelReply:
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
        response = await _create(
            turn, input=batch.outputs, previous_response_id=response.id, tool_choice="none" if last else "auto"
        )
        made += 1
    if response.function_calls:
        turn.cap_hit = True
    return response


async def _corrected(turn: _Turn, response: ModelReply) -> tuple[str, str]:
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
        corrected = await _create(
            turn, input=[_user(request)], previous_response_id=response.id, tool_choice="none", may_answer=False
        )
    except (ModelUnavailable, HistoryExpired) as exc:  # keep the first answer; its bad markers are removed below
        log.warning("correction round failed: %s", exc)
        return text, response.id
    return corrected.output_text, corrected.id


async def _finish(turn: _Turn, text: str, final_id: str) -> Answer:
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
        flagged += await unsupported_labels(turn.model, turn.options, rendered, known)
    if flagged:
        log.warning("citations not confirmed: %s", flagged)
        notices.append(messages.unverified(sorted(set(flagged))))
    if turn.cap_hit:
        notices.append(messages.CAP_HIT)
    _keep_items(turn)
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


def _keep_items(turn: _Turn) -> None:
    """Keep this turn's items with the conversation (bounded, oldest turns first out) when the service keeps no
    responses; none otherwise (see ModelState.keeps_items)."""
    conversation = turn.conversation
    if not turn.options.model_state.keeps_items:
        conversation.model_items = []
        return
    earlier = [] if turn.earlier_dropped or turn.restated else conversation.model_items
    restated = [turn.context[: turn.asked_at]] if turn.restated and turn.asked_at else []
    groups = [*earlier, *restated, turn.context[turn.asked_at :]]
    conversation.model_items = bounded_items(groups, max_chars=turn.options.history_chars)


def _labels_of(refs: list[str], rendered: Rendered, known: Mapping[str, Chunk]) -> list[int]:
    """The labels the citations of these sources show under."""
    pages = {(known[ref].file, known[ref].cited_page) for ref in refs}
    return [c.label for c in rendered.citations if (c.file, c.page) in pages]


async def _create(
    turn: _Turn,
    *,
    input: list[dict[str, Any]],
    previous_response_id: str | None = None,
    tool_choice: str = "auto",
    may_answer: bool = True,
) -> ModelReply:
    """One model call: chained by `previous_response_id`, or, when the service keeps no responses, with this turn's
    whole context resent. A refusal of previous_response_id in auto mode switches at once and resends the call."""
    state = turn.options.model_state
    whole = turn.context + input if previous_response_id else list(input)
    if previous_response_id is None:  # a new chain: the question closes its input
        turn.asked_at = len(input) - 1
    if state.stateless:
        response = await _call(turn, input=whole, tool_choice=tool_choice, may_answer=may_answer, store=False)
    else:
        try:
            response = await _call(turn, input=input, previous_response_id=previous_response_id,
                                   tool_choice=tool_choice, may_answer=may_answer)  # fmt: skip
        except KeepsNoResponses as exc:
            if not state.learn_stateless():
                log.error("model configuration: %s: %s: %s", exc.setting, exc.detail, exc.fix)
                raise
            response = await _call(turn, input=whole, tool_choice=tool_choice, may_answer=may_answer, store=False)
    turn.context = whole + list(response.items)
    return response


async def _call(
    turn: _Turn,
    *,
    input: list[dict[str, Any]],
    previous_response_id: str | None = None,
    tool_choice: str = "auto",
    may_answer: bool = True,
    store: bool = True,
) -> ModelReply:
    """One request. Instructions, tools and reasoning are resent: previous_response_id does not carry them.

    A call that `may_answer` is streamed when the turn streams; the correction round's is not (it replaces).
    `store=False`: the service keeps nothing, so there is nothing to delete (its id is not reported)."""
    options = turn.options
    params: dict[str, Any] = {
        "model": options.model_for(turn.profile),
        "input": input,
        "instructions": prompts.load("instructions"),
        "tools": prompts.request_tools(code_interpreter=options.code_interpreter),
        "tool_choice": tool_choice,
    }
    if previous_response_id:
        params["previous_response_id"] = previous_response_id
    if not store:
        params["store"] = False
    if options.reasoning:
        params["reasoning"] = {"effort": options.effort_for(turn.profile)}
    include = ["code_interpreter_call.outputs"] if options.code_interpreter else []  # else no outputs come back
    if options.reasoning and not store:  # resent reasoning items must carry it: nothing is stored to refer to
        include.append("reasoning.encrypted_content")
    if include:
        params["include"] = include
    # openai's errors leave as Folio errors naming their cause (bot.agent.provider_errors); the call is timed, and a
    # streamed call is read to its end inside the block.
    chained = bool(previous_response_id)
    response: ModelReply | None = None
    try:
        async with model_call(turn.model, model=params["model"], profile=turn.profile, chained=chained) as end:
            if turn.stream and may_answer:
                turn.drafts += 1
                writer = AnswerWriter(
                    turn.conversation.sources, link_for=options.link_for, events=turn.tools.events, draft=turn.drafts,
                    step_ids=turn.tools.step_ids, shown_code=turn.shown_code, stored=store,
                )  # fmt: skip
                response = await create_streamed(turn.model, params, writer)
                announced = writer.created == response.id
            else:
                response = await create(turn.model, request_body(params))
                announced = False
    finally:  # the turn's observer counts every call, failed ones included
        await turn.tools.events(_called(turn.profile, params["model"], end.outcome, end.seconds, response))
    assert response is not None  # the call raised otherwise
    await _record(turn, response, announced=announced, stored=store)
    check_response(response)  # failed, or stopped by a content filter
    return response


def _called(profile: str, model: str, outcome: str, seconds: float, response: ModelReply | None) -> ModelCalled:
    """The event of one ended call, with the tokens the service reported for it (the usage counters add these)."""
    if response is None:
        return ModelCalled(profile, outcome, seconds, model)
    return ModelCalled(profile, outcome, seconds, model, response.input_tokens, response.cached_tokens,
                       response.output_tokens)  # fmt: skip


async def _record(turn: _Turn, response: ModelReply, *, announced: bool, stored: bool = True) -> None:
    """Keep the response id (for deletion; reported unless a stream `announced` it already; neither when the service
    was told not to store it: there is nothing to delete), its tokens, and its code runs, which the server executed
    itself."""
    turn.model_calls += 1
    if stored:
        turn.response_ids.append(response.id)
    if stored and not announced:
        await turn.tools.events(ResponseCreated(response.id))
    if response.has_usage:
        turn.usage = turn.usage + Usage(input_tokens=response.input_tokens, output_tokens=response.output_tokens)
    turn.trace.append(TraceStep("model", note=f"{response.id}: {response.input_tokens} in, "
                                f"{response.output_tokens} out"))  # fmt: skip
    for run in response.code_runs:
        if run.id not in turn.shown_code:  # a streamed call showed it already, before the text using it
            await turn.tools.events(calculation(run, turn.tools.step_ids))
        record = bounded({"code": run.code, "logs": run.logs})  # the sandbox may print megabytes
        turn.tool_calls.append(ToolCall(name=CODE, arguments={"code": record["code"]}, summary=record["logs"]))
        turn.trace.append(TraceStep(CODE, query=run.code, note=run.logs[:200]))


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _log_trace(turn: _Turn, answer: Answer) -> None:
    for number, step in enumerate(turn.trace, 1):
        refs = ",".join(step.refs)
        note = "" if step.tool == CODE else step.note  # a code run's note is what it printed: content
        log.debug("turn step %d %s sources=%s %s", number, step.tool, refs, note)
        if step.query or note != step.note:  # queries and code quote the question: only with FOLIO_LOG_CONTENT
            content_log.debug("turn step %d %s query=%r %s", number, step.tool, step.query, step.note)
    log.debug(  # the per-turn record (bot.turns.observer) is the INFO line; this trace holds search queries
        "turn done: mode=%s %d model calls, %d tool calls, %d+%d tokens, %d citations, cap_hit=%s",
        answer.mode, answer.model_calls, len(answer.tool_calls), answer.usage.input_tokens,
        answer.usage.output_tokens, len(answer.citations), answer.cap_hit,
    )  # fmt: skip
