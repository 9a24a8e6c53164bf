"""Hostile model output (issue 9, item 7): malformed tool arguments become tool errors the model sees, never a failed
turn; progress text is bounded. (An over-long question is the turn's to refuse: tests/turns/test_turn.py.)"""

from __future__ import annotations

import json

import pytest
from openai import AsyncOpenAI

from bot.agent import AgentOptions, RunOptions, run_turn
from bot.agent.events import Step, TurnEvent
from bot.models import Conversation
from tests.agent.doubles import ScriptedRetriever, chunk
from tests.fakes.openai_responses import FakeResponses, raw_call, reply, search, tools

DEEP = 100_000  # far past Python's recursion limit: json.loads raises RecursionError, not ValueError
MALFORMED = {
    "deeply nested": '{"query": ' + "[" * DEEP + "]" * DEEP + "}",
    "deeply nested beside a good query": '{"query": "leave", "x": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}",
    "a huge string": json.dumps({"query": "leave " * 400_000}),
    "a huge number": '{"query": ' + "9" * 50_000 + "}",
    "a wrong type": '{"query": {"$ne": null}}',
    "not an object": '["leave"]',
    "not JSON": '{"query": "leave"',
    "null": "null",
    "a lone surrogate": '{"query": "\\ud800"}',
}


@pytest.mark.parametrize("tool", ["search_documents", "rewrite_query"])
@pytest.mark.parametrize("arguments", MALFORMED.values(), ids=MALFORMED.keys())
async def test_malformed_tool_arguments_become_a_tool_error_and_the_turn_goes_on(
    fake_model: FakeResponses,
    model: AsyncOpenAI,
    options: AgentOptions,
    conversation: Conversation,
    tool: str,
    arguments: str,
) -> None:
    retriever = ScriptedRetriever(default=[chunk(1)])
    fake_model.script(tools(raw_call(tool, arguments)), tools(search("annual leave")), reply("Leave is 20 days [S1]."))

    answer = await run_turn("How much leave?", conversation, model=model, retriever=retriever, options=options)

    (error,) = fake_model.requests[1].tool_outputs.values()
    assert error.startswith("The call could not run:") and len(error) < 300
    assert retriever.queries == ["annual leave"]  # the malformed call searched nothing
    assert answer.text == "Leave is 20 days [1]."
    assert all(len(value) <= 1_000 for call in answer.tool_calls for value in call.arguments.values())


async def test_progress_titles_are_one_bounded_line(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    query = "annual leave\n<!channel> *now* " + "very " * 100
    fake_model.script(tools(search(query)), reply("[NOT_IN_DOCUMENTS] Nothing."))
    heard: list[TurnEvent] = []

    async def listen(event: TurnEvent) -> None:
        heard.append(event)

    await run_turn(
        "How much leave?",
        conversation,
        model=model,
        retriever=ScriptedRetriever(),
        options=options,
        run=RunOptions(events=listen),
    )

    titles = [event.title for event in heard if isinstance(event, Step)]
    assert titles and all(len(title) <= 100 and "\n" not in title for title in titles)
    assert titles[0].startswith("Searching: annual leave <!channel> *now* very") and titles[0].endswith("…")
