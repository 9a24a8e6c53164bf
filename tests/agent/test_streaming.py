"""A streamed turn: the same loop and the same Answer, with the answer's checked text reported as it is written."""

from __future__ import annotations

import pytest
from openai import AsyncOpenAI

from bot import messages
from bot.agent import AgentOptions, RunOptions, run_turn
from bot.agent.events import AnswerText, ModelCalled, ResponseCreated, Step, TurnEvent
from bot.models import Conversation
from tests.agent.doubles import ScriptedRetriever, chunk
from tests.fakes.openai_responses import Code, FakeResponses, error, mangled, reply, search, tools

QUESTION = "What is the notice period?"


def written(events: list[TurnEvent], draft: int | None = None) -> str:
    """The answer text as a listener saw it, `[n]` for each citation."""
    pieces = [e for e in events if isinstance(e, AnswerText) and (draft is None or e.draft == draft)]
    return "".join(f"[{e.citation.label}]" if e.citation else e.text for e in pieces)


async def run(model: AsyncOpenAI, options: AgentOptions, conversation: Conversation, *, stream: bool = True):
    events: list[TurnEvent] = []

    async def listen(event: TurnEvent) -> None:
        events.append(event)

    retriever = ScriptedRetriever(default=[chunk(1), chunk(2, file="plan.pdf", page=4)])
    answer = await run_turn(
        QUESTION,
        conversation,
        model=model,
        retriever=retriever,
        options=options,
        run=RunOptions(events=listen, stream=stream),
    )
    return answer, events


async def test_the_answer_streams_after_the_steps_and_adds_up_to_the_final_answer(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("notice period")), reply("One month [S1], two for managers [S2][S2]."))

    answer, events = await run(model, options, conversation)

    texts = [e for e in events if isinstance(e, AnswerText)]
    before = events[: events.index(texts[0])]
    assert len(texts) > 3 and all(isinstance(e, Step | ResponseCreated | ModelCalled) for e in before)
    assert written(events) == answer.text == "One month [1], two for managers [2]."
    assert all("[S" not in e.text for e in texts)
    assert [e.citation.url for e in texts if e.citation] == [c.url for c in answer.citations]
    assert [request.body.get("stream") for request in fake_model.requests] == [True, True]


async def test_the_correction_round_is_not_streamed_and_its_answer_differs_from_the_streamed_text(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("notice period")), reply("One month [S7]."), reply("One month [S1]."))

    answer, events = await run(model, options, conversation)

    assert written(events) == "One month."  # the unknown marker was never reported
    assert answer.text == "One month [1]." != written(events)
    assert [request.body.get("stream") for request in fake_model.requests] == [True, True, None]


async def test_without_stream_the_calls_and_events_are_as_before(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("notice period")), reply("One month [S1]."))

    answer, events = await run(model, options, conversation, stream=False)

    assert answer.text == "One month [1]." and not any(isinstance(e, AnswerText) for e in events)
    assert all("stream" not in request.body for request in fake_model.requests)


async def test_a_failing_streamed_call_falls_back_to_quoted_passages_as_before(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("notice period")), error(500))

    answer, _ = await run(model, options, conversation)

    assert answer.mode == "search_only" and messages.MODEL_DOWN in answer.notices


async def test_a_calculation_shows_before_the_text_that_uses_it_and_only_once(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    calculated = reply("That is 42 days [S1].", code=(Code("print(40 + 2)", "42\n"),))
    fake_model.script(tools(search("notice period")), calculated)

    answer, events = await run(model, options, conversation)

    calculations = [i for i, e in enumerate(events) if isinstance(e, Step) and e.kind == "calculate"]
    first_text = next(i for i, e in enumerate(events) if isinstance(e, AnswerText))
    assert len(calculations) == 1 and calculations[0] < first_text
    assert events[calculations[0]].detail.strip() == "42" and answer.text == "That is 42 days [1]."


def _without(kind: str, field: str):
    return lambda event: {k: v for k, v in event.items() if k != field} if event["type"] == kind else event


def _usage(response: dict) -> dict:
    return {**response, "usage": {**response["usage"], "input_tokens": "many", "output_tokens": "lots"}}


def _huge_usage(response: dict) -> dict:
    return {**response, "usage": {**response["usage"], "input_tokens": 2**63 - 1, "output_tokens": 2**63}}


HOSTILE_STREAMS = {  # issue 18, item 9: what a broken proxy or a hostile server sent
    "response.created without response": _without("response.created", "response"),
    "output_item.done without item": _without("response.output_item.done", "item"),
    "a data line that is not JSON": lambda e: "{not json" if e["type"] == "response.output_text.delta" else e,
    "non-numeric token counts": lambda e: (
        {**e, "response": _usage(e["response"])} if e["type"] == "response.completed" else e
    ),
    "token counts past any context (2**63)": lambda e: (
        {**e, "response": _huge_usage(e["response"])} if e["type"] == "response.completed" else e
    ),
}


@pytest.mark.parametrize("mangle", HOSTILE_STREAMS.values(), ids=HOSTILE_STREAMS.keys())
async def test_a_malformed_model_stream_is_a_named_failure_with_the_search_only_answer(
    fake_model: FakeResponses,
    model: AsyncOpenAI,
    options: AgentOptions,
    conversation: Conversation,
    mangle,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_model.script(tools(search("notice period")), mangled(reply("One month [S1]."), mangle))

    answer, _ = await run(model, options, conversation)

    assert answer.mode == "search_only" and messages.MODEL_DOWN in answer.notices
    assert "malformed" in caplog.text


@pytest.mark.parametrize("usage", [_usage, _huge_usage], ids=["non-numeric", "2**63"])
async def test_a_plain_reply_with_non_numeric_token_counts_gets_the_search_only_answer_too(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation, usage
) -> None:
    fake_model.script(tools(search("notice period")), mangled(reply("One month [S1]."), usage))

    answer, _ = await run(model, options, conversation, stream=False)

    assert answer.mode == "search_only" and messages.MODEL_DOWN in answer.notices
