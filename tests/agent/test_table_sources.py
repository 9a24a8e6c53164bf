"""A spreadsheet's rows reach the model marked as a table, and the instructions say to compute on them with the code
interpreter (issue 20, item 3): a model that reads numbers off a table adds them up wrong."""

from __future__ import annotations

from openai import AsyncOpenAI

from bot.agent import AgentOptions, run_turn
from bot.models import Chunk, Conversation
from tests.agent.doubles import SCOPE, ScriptedRetriever
from tests.fakes.openai_responses import FakeResponses, reply, search, shown_sources, tools

ROWS = Chunk(
    id="orders",
    file="orders.xlsx.pdf",
    page=None,
    container=SCOPE.containers[0],
    tabular=True,
    context="orders.xlsx | sheet Orders",
    text="Region | Product | Units\nNorth | Widget | 120\nSouth | Widget | 80",
)
PAGE = Chunk(id="memo", file="memo.pdf", page=3, container=SCOPE.containers[0], text="Widgets sold well.")


async def test_a_table_source_is_marked_and_the_model_is_told_to_compute_with_code(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("widget units")), reply("200 widgets [S1]."))

    await run_turn(
        "How many widgets in all?",
        conversation,
        model=model,
        retriever=ScriptedRetriever(default=[ROWS, PAGE]),
        options=options,
    )

    (output,) = fake_model.requests[1].tool_outputs.values()
    table, page = shown_sources(output)
    assert table == {
        "ref": "S1",
        "title": "orders.xlsx",
        "page": None,
        "container": SCOPE.containers[0],
        "date": None,
        "context": "orders.xlsx | sheet Orders",
        "content": ROWS.text,
        "table": True,
    }
    assert "table" not in page  # a page of a PDF is not a table
    instructions = fake_model.requests[0].body["instructions"]
    assert 'A source with `"table": true` holds rows of a spreadsheet' in instructions
    assert "load them into the code_interpreter tool" in instructions
