"""The Responses API read the cheap way (bot/agent/wire.py, bot/agent/streaming.py) says what the SDK's typed objects
say: the same ids, text, function calls, code runs and tokens, whether the reply came whole or as events."""

from __future__ import annotations

import json

import pytest
from openai import AsyncOpenAI

from bot.agent import AgentOptions, prompts
from bot.agent.events import AnswerText, StepIds, TurnEvent
from bot.agent.streaming import AnswerWriter, ServerSentEvents, create_streamed
from bot.agent.wire import MalformedReply, ModelReply, create, request_body
from bot.errors import ModelUnavailable
from bot.models import Conversation
from tests.agent.test_streaming import run, written
from tests.fakes.openai_responses import Code, FakeResponses, reply, search, tools

PARAMS = {
    "model": "gpt-5-mini",
    "input": [{"role": "user", "content": "What is the notice period?"}],
    "instructions": "Answer from the documents.",
    "tools": list(prompts.request_tools(code_interpreter=True)),
    "tool_choice": "auto",
    "include": ["code_interpreter_call.outputs"],
}
STEPS = [
    tools(search("notice period"), search("notice period managers")),
    reply("One month [S1].", code=(Code("print(30 + 1)", "31\n"),)),
    reply(""),
]


@pytest.mark.parametrize("step", STEPS, ids=["function calls", "text and a code run", "no text"])
async def test_a_reply_reads_as_the_sdks_typed_response(
    step: object, fake_model: FakeResponses, model: AsyncOpenAI
) -> None:
    fake_model.script(step, step)  # the same reply twice: once for the SDK's typed method, once for ours

    typed = await model.responses.create(**PARAMS)
    ours = await create(model, request_body(PARAMS))

    assert (ours.status, ours.output_text) == (typed.status, typed.output_text)
    assert [(c.name, c.arguments) for c in ours.function_calls] == [
        (item.name, item.arguments) for item in typed.output if item.type == "function_call"
    ]
    runs = [item for item in typed.output if item.type == "code_interpreter_call"]
    assert [(r.code, r.logs) for r in ours.code_runs] == [
        (r.code, "\n".join(o.logs for o in r.outputs or [])) for r in runs
    ]
    assert typed.usage is not None and (ours.input_tokens, ours.output_tokens) == (
        typed.usage.input_tokens,
        typed.usage.output_tokens,
    )
    assert ours.id.startswith("resp_") and ours.id != typed.id
    assert fake_model.requests[0].body == fake_model.requests[1].body  # the same request, as the SDK would send it


async def test_a_streamed_reply_reads_as_the_whole_one(fake_model: FakeResponses, model: AsyncOpenAI) -> None:
    step = reply("One month [S1], two [S2].", code=(Code("print(1)", "1\n"),))
    fake_model.script(step, step)
    events: list[TurnEvent] = []

    async def listen(event: TurnEvent) -> None:
        events.append(event)

    whole = await create(model, request_body(PARAMS))
    writer = AnswerWriter({}, link_for=lambda chunk: None, events=listen, draft=1, step_ids=StepIds(), shown_code=set())
    streamed = await create_streamed(model, PARAMS, writer)

    assert (streamed.output_text, streamed.code_runs[0].logs) == (whole.output_text, whole.code_runs[0].logs)
    assert writer.created == streamed.id and [s.status for s in (whole, streamed)] == ["completed", "completed"]
    assert "".join(e.text for e in events if isinstance(e, AnswerText)) == "One month, two."  # unknown markers dropped


def test_server_sent_events_split_anywhere_decode_the_same() -> None:
    events = [
        {"type": "response.created", "response": {"id": "resp_1"}},
        {"type": "response.output_text.delta", "delta": "caf\u00e9 \n\n [S1]"},
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": []}},
    ]
    body = b": a comment\r\n\r\n" + b"".join(
        f"event: {e['type']}\r\ndata: {json.dumps(e, ensure_ascii=False)}\r\n\r\n".encode() for e in events
    )
    whole = ServerSentEvents()
    by_byte = ServerSentEvents()

    assert list(whole.feed(body)) == events
    assert [event for i in range(len(body)) for event in by_byte.feed(body[i : i + 1])] == events
    assert by_byte.final is not None and by_byte.final.id == "resp_1"


@pytest.mark.parametrize("ascii_only", [True, False])
def test_text_deltas_in_the_services_compact_layout_read_as_decoded_whole(ascii_only: bool) -> None:
    texts = ['caf\u00e9 "quoted" \\ [S1]', "tab\t, line\n", '{"delta":"not this"}', "\U0001f600 \u2028"]
    deltas = [
        {
            "type": "response.output_text.delta",
            "sequence_number": n,
            "item_id": 'msg_"delta":"x"',
            "output_index": 0,
            "content_index": 0,
            "delta": text,
            "logprobs": [],
        }
        for n, text in enumerate(texts)
    ]
    events = [{"type": "response.in_progress", "response": {"id": "resp_1"}}, *deltas]
    body = b"".join(
        f"data: {json.dumps(e, ensure_ascii=ascii_only, separators=(',', ':'))}\n\n".encode() for e in events
    )

    read = list(ServerSentEvents().feed(body))

    assert [event["delta"] for event in read] == texts  # the item id's quotes are escaped: not taken for the key


def test_a_broken_text_delta_is_a_malformed_reply() -> None:
    body = b'data: {"type":"response.output_text.delta","delta":"bad \\x escape"}\n\n'
    with pytest.raises(MalformedReply):
        list(ServerSentEvents().feed(body))


def test_a_reply_that_is_not_a_response_is_the_services_fault_not_a_crash() -> None:
    with pytest.raises(ModelUnavailable):
        ModelReply.read({"object": "list", "data": []})  # a proxy answering something else with HTTP 200
    empty = ModelReply.read({"id": "resp_2"})
    assert (empty.output_text, empty.function_calls, empty.has_usage) == ("", (), False)


async def test_an_answer_that_trickles_in_still_streams_whole_and_checked(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    text = "One month for staff [S1], two for managers [S2], and three in the first year of service [S1]."
    fake_model.script(tools(search("notice period")), reply(text, token_delay=0.012))  # read a few tokens at a time

    answer, events = await run(model, options, conversation)

    assert (
        written(events) == answer.text == "One month for staff [1], two for managers [2], and three in the first "
        "year of service [1]."
    )
    assert sum(isinstance(e, AnswerText) for e in events) > 3  # shown as it came, not all at the end


async def test_a_fast_trickle_is_read_many_tokens_at_a_time(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    """Tokens 3 ms apart (a fast model) are gathered between reads, as slow ones are: each read and each piece the
    view hears costs CPU, and Slack shows the text in batches anyway."""
    text = "Staff give one month of notice [S1], " + " ".join(["and managers give two months"] * 10) + " [S2]."
    fake_model.script(tools(search("notice period")), reply(text, token_delay=0.003))

    answer, events = await run(model, options, conversation)

    pieces = sum(isinstance(e, AnswerText) for e in events)
    tokens = len(text.split())
    assert written(events) == answer.text
    assert 3 < pieces < tokens / 2, pieces  # one a token before


def test_token_counts_are_bounded_and_sane_before_they_are_counted() -> None:
    """A reply reporting ~2**63 tokens would overflow the day's Redis counters; cached tokens are part of the input."""
    base = {"id": "resp_1", "status": "completed", "output": []}
    with pytest.raises(MalformedReply, match="usage.input_tokens"):
        ModelReply.read({**base, "usage": {"input_tokens": 2**63 - 1, "output_tokens": 1}})
    with pytest.raises(MalformedReply, match="usage.output_tokens"):
        ModelReply.read({**base, "usage": {"input_tokens": 1, "output_tokens": 10**9}})
    odd = ModelReply.read(
        {**base, "usage": {"input_tokens": 100, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 900}}}
    )
    assert (odd.input_tokens, odd.cached_tokens, odd.output_tokens) == (100, 100, 5)
