"""The fake Responses server behaves like the service where Folio depends on it (other helpers drive it too)."""

from __future__ import annotations

import asyncio

import openai
import pytest

from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, rewrite, search, tools

TOOLS = [{"type": "function", "name": "search_documents", "description": "search", "strict": True,
          "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"],
                         "additionalProperties": False}}]  # fmt: skip


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
                model="m", previous_response_id=first.id, tools=TOOLS,
                input=[{"type": "function_call_output", "call_id": call_ids[0], "output": "x"}],
            )  # fmt: skip
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
