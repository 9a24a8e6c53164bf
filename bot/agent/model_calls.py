"""One model call of a turn: its request built (instructions, tools and reasoning resent every time), chained by
`previous_response_id` or, for a service that keeps no responses, with the turn's whole context resent (see
bot.agent.state); its response recorded; and the items a thread keeps for the next turn.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.agent import prompts
from bot.agent.calls import bounded
from bot.agent.events import ModelCalled, ResponseCreated
from bot.agent.history import history_items
from bot.agent.provider_errors import check_response, model_call
from bot.agent.state import bounded as bounded_items
from bot.agent.state import flattened
from bot.agent.streaming import AnswerWriter, calculation, create_streamed
from bot.agent.tools import CODE, TraceStep
from bot.agent.turn_state import TurnState
from bot.agent.wire import ModelReply, create, request_body
from bot.errors import KeepsNoResponses
from bot.models import ToolCall, Usage

log = logging.getLogger(__name__)


async def call_model(
    turn: TurnState,
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
            response = await _call(
                turn,
                input=input,
                previous_response_id=previous_response_id,
                tool_choice=tool_choice,
                may_answer=may_answer,
            )
        except KeepsNoResponses as exc:
            if not state.learn_stateless():
                log.error("model configuration: %s: %s: %s", exc.setting, exc.detail, exc.fix)
                raise
            response = await _call(turn, input=whole, tool_choice=tool_choice, may_answer=may_answer, store=False)
    turn.context = whole + [dict(item) for item in response.items]
    return response


async def _call(
    turn: TurnState,
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
        "tools": prompts.request_tools(
            code_interpreter=options.code_interpreter, readable=turn.tools.reader.titles if turn.tools.reader else ()
        ),
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
                    turn.conversation.sources,
                    link_for=options.link_for,
                    events=turn.tools.events,
                    draft=turn.drafts,
                    step_ids=turn.tools.step_ids,
                    shown_code=turn.shown_code,
                    stored=store,
                )
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
    return ModelCalled(
        profile, outcome, seconds, model, response.input_tokens, response.cached_tokens, response.output_tokens
    )


async def _record(turn: TurnState, response: ModelReply, *, announced: bool, stored: bool = True) -> None:
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
    turn.trace.append(
        TraceStep("model", note=f"{response.id}: {response.input_tokens} in, {response.output_tokens} out")
    )
    for run in response.code_runs:
        if run.id not in turn.shown_code:  # a streamed call showed it already, before the text using it
            await turn.tools.events(calculation(run, turn.tools.step_ids))
        record = bounded({"code": run.code, "logs": run.logs})  # the sandbox may print megabytes
        turn.tool_calls.append(ToolCall(name=CODE, arguments={"code": record["code"]}, summary=record["logs"]))
        turn.trace.append(TraceStep(CODE, query=run.code, note=run.logs[:200]))


def earlier(turn: TurnState) -> list[dict[str, Any]]:
    """The thread so far as input items: its kept items, else its turns restated (as output messages)."""
    conversation = turn.conversation
    if conversation.model_items:
        return flattened(conversation.model_items)
    turn.restated = bool(conversation.turns)
    return history_items(conversation.turns, outputs=True) if conversation.turns else []


def keep_items(turn: TurnState) -> None:
    """Keep this turn's items with the conversation (bounded, oldest turns first out) when the service keeps no
    responses; none otherwise (see ModelState.keeps_items)."""
    conversation = turn.conversation
    if not turn.options.model_state.keeps_items:
        conversation.model_items = []
        return
    before = [] if turn.earlier_dropped or turn.restated else conversation.model_items
    restated = [turn.context[: turn.asked_at]] if turn.restated and turn.asked_at else []
    groups = [*before, *restated, turn.context[turn.asked_at :]]
    conversation.model_items = bounded_items(groups, max_chars=turn.options.history_chars)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}
