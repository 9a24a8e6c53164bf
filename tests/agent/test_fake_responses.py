"""The fake Responses server behaves like the service where Folio depends on it (other helpers drive it too)."""

from __future__ import annotations

import asyncio
import time

import openai
import pytest

from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, rewrite, search, tools

TOOLS = [
    {
        "type": "function",
        "name": "search_documents",
        "description": "search",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    }
]


async def test_a_body_outside_the_schema_is_rejected_and_recorded() -> None:
    with FakeResponses() as fake:
        async with fake.client() as client:
            with pytest.raises(openai.BadRequestError) as caught:
                await client.responses.create(model="m", input="q", tools=[{"type": "function", "name": "f"}])
    assert caught.value.code == "invalid_request_body"
    assert fake.problems and "CreateResponse tools/0" in fake.problems[0]


async def test_chaining_needs_every_call_answered_and_a_stored_response(fake_model: FakeResponses) -> None:
    fake_model.script(tools(search("a"), search("b")), reply("done"))
    async with fake_model.client() as client:
        first = await client.responses.create(model="m", input="q", tools=TOOLS)
        call_ids = [item.call_id for item in first.output if item.type == "function_call"]
        with pytest.raises(openai.BadRequestError, match="No tool output found"):
            await client.responses.create(
                model="m",
                previous_response_id=first.id,
                tools=TOOLS,
                input=[{"type": "function_call_output", "call_id": call_ids[0], "output": "x"}],
            )
        outputs = [{"type": "function_call_output", "call_id": c, "output": "x"} for c in call_ids]
        second = await client.responses.create(model="m", previous_response_id=first.id, input=outputs, tools=TOOLS)
        assert second.output_text == "done"
        await client.responses.delete(second.id)
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(model="m", previous_response_id=second.id, input="more")
        assert caught.value.code == "previous_response_not_found"
    assert [r.depth for r in fake_model.requests] == [0, 1, 1]  # the rejected request is recorded too


async def test_a_function_script_serves_many_concurrent_conversations() -> None:
    def agent(request: Request) -> Step:  # rewrite, two searches, answer: decided from the chain alone
        if request.previous is None:
            return tools(rewrite(request.user_text))
        if request.depth == 1:
            return tools(search("part one"), search("part two"))
        return reply(f"answer after {len(request.tool_outputs)} searches")

    async def conversation(client: openai.AsyncOpenAI, number: int) -> str:
        response = await client.responses.create(model="m", input=f"question {number}", tools=TOOLS)
        while calls := [item for item in response.output if item.type == "function_call"]:
            outputs = [{"type": "function_call_output", "call_id": c.call_id, "output": "ok"} for c in calls]
            response = await client.responses.create(
                model="m", previous_response_id=response.id, input=outputs, tools=TOOLS
            )
        return response.output_text

    with FakeResponses(latency=0.05) as fake:
        fake.respond_with(agent)
        async with fake.client() as client:
            answers = await asyncio.gather(*(conversation(client, n) for n in range(8)))
        assert fake.problems == []
    assert answers == ["answer after 2 searches"] * 8
    assert len(fake.requests) == 24


async def test_a_streamed_response_arrives_as_schema_checked_events_in_the_services_order(
    fake_model: FakeResponses,
) -> None:
    fake_model.script(tools(search("a")), reply("Net 30 [S1].", tokens=["Net", " 30 [S", "1]."], token_delay=0.05))
    async with fake_model.client() as client:
        async with await client.responses.create(model="m", input="q", tools=TOOLS, stream=True) as stream:
            first = [event async for event in stream]
        outputs = [{"type": "function_call_output", "call_id": first[-1].response.output[0].call_id, "output": "x"}]
        started = time.monotonic()
        async with await client.responses.create(
            model="m", previous_response_id=first[-1].response.id, input=outputs, tools=TOOLS, stream=True
        ) as stream:
            second = [(event, time.monotonic() - started) async for event in stream]
    assert [e.type for e in first] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = [(event.delta, at) for event, at in second if event.type == "response.output_text.delta"]
    assert [delta for delta, _ in deltas] == ["Net", " 30 [S", "1]."]
    assert deltas[-1][1] - deltas[0][1] >= 0.09  # two waits of 50 ms between three tokens
    final = second[-1][0]
    assert final.type == "response.completed" and final.response.output_text == "Net 30 [S1]."
    assert [e.sequence_number for e, _ in second] == list(range(len(second)))
    assert final.response.id in fake_model.first_tokens and fake_model.stored_ids()[-1] == final.response.id
