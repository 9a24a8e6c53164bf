"""The tool loop against the fake Responses server: rewrite, search, budget, dedupe, source ids, cap, code."""

from __future__ import annotations

import pytest
from openai import AsyncOpenAI

from bot import messages
from bot.agent import AgentOptions, RunOptions, run_turn
from bot.agent.events import ModelCalled, Step, TurnEvent
from bot.models import Conversation
from tests.agent.doubles import ScriptedRetriever, chunk
from tests.fakes.openai_responses import Code, FakeResponses, call, reply, rewrite, search, shown_sources, tools

QUESTION = "wat is the notis period for resigning?"
REWRITTEN = "What is the notice period for resigning?"


def refs(output: str) -> list[str]:
    """The source ids one search output showed the model."""
    return [source["ref"] for source in shown_sources(output)]


@pytest.mark.parametrize(
    ("rewrites", "searches", "expected"),
    [
        (False, [QUESTION], [QUESTION]),
        (True, [QUESTION], [REWRITTEN]),  # the safety net: the lone search still had the user's wording
        (False, [QUESTION, "probation notice", "garden leave"], [QUESTION, "probation notice", "garden leave"]),
        (True, [QUESTION, "probation notice", "garden leave"], [QUESTION, "probation notice", "garden leave"]),
    ],
    ids=["no-rewrite-one-search", "rewrite-one-search", "no-rewrite-three-searches", "rewrite-three-searches"],
)
async def test_rewrite_safety_net_fires_only_for_a_lone_search(
    fake_model: FakeResponses,
    model: AsyncOpenAI,
    options: AgentOptions,
    conversation: Conversation,
    rewrites: bool,
    searches: list[str],
    expected: list[str],
) -> None:
    retriever = ScriptedRetriever(default=[chunk(1)])
    batch = ([rewrite(REWRITTEN)] if rewrites else []) + [search(q) for q in searches]
    fake_model.script(tools(*batch), reply("One month [S1]."))

    answer = await run_turn(QUESTION, conversation, model=model, retriever=retriever, options=options)

    assert retriever.queries == expected
    assert set(retriever.scopes) == {conversation.scope}  # the model picks the words, never the container
    assert [c.name for c in answer.tool_calls] == [c.name for c in batch]
    outputs = fake_model.requests[1].tool_outputs
    assert len(outputs) == len(batch)  # one function_call_output per call_id
    if rewrites:
        assert REWRITTEN in outputs.values()
    assert answer.text == "One month [1]."


async def test_source_blocks_carry_every_field_and_the_instructions_prefer_newer_documents(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    old = chunk(1, file="leave_2023.pdf", page=3, date="2023-01-01", text="Leave is 20 days.")
    new = chunk(2, file="leave_2025.pdf", page=5, date="2025-02-01", text="Leave is 25 days.")
    retriever = ScriptedRetriever(default=[old, new])
    fake_model.script(tools(search("annual leave")), reply("25 days [S2]; the 2025 policy replaces 2023 [S1]."))

    await run_turn("How much leave?", conversation, model=model, retriever=retriever, options=options)

    (output,) = fake_model.requests[1].tool_outputs.values()
    assert shown_sources(output)[1] == {
        "ref": "S2",
        "title": "leave_2025.pdf",
        "page": 5,
        "container": "hr",
        "date": "2025-02-01",
        "context": "",
        "content": "Leave is 25 days.",
    }
    for request in fake_model.requests:  # instructions, tools and reasoning are resent with every call
        assert "prefer the one with the later date" in request.body["instructions"]
        assert "never instructions" in request.body["instructions"]
        assert {t.get("name", t["type"]) for t in request.body["tools"]} == {
            "rewrite_query",
            "search_documents",
            "code_interpreter",
        }
        assert request.body["reasoning"] == {"effort": "low"}
        assert request.body["include"] == ["code_interpreter_call.outputs"]
    assert fake_model.requests[1].body["previous_response_id"] == fake_model.requests[0].response_id


async def test_budget_exhaustion_replaces_content_with_a_note(
    fake_model: FakeResponses, model: AsyncOpenAI, conversation: Conversation
) -> None:
    options = AgentOptions(model_fast="gpt-5-mini", model_thorough="gpt-5", chunk_budget=3)
    retriever = ScriptedRetriever({"a": [chunk(1), chunk(2)], "b": [chunk(3), chunk(4)], "c": [chunk(5)]})
    fake_model.script(tools(search("a"), search("b")), tools(search("c")), reply("Facts [S1][S3]."))

    answer = await run_turn("Tell me a, b and c", conversation, model=model, retriever=retriever, options=options)

    first = list(fake_model.requests[1].tool_outputs.values())
    assert refs(first[0]) == ["S1", "S2"]
    assert refs(first[1]) == ["S3"] and "limit of 3 passages" in first[1]
    (last,) = fake_model.requests[2].tool_outputs.values()
    assert refs(last) == [] and "limit of 3 passages" in last
    assert retriever.queries == ["a", "b"]  # nothing more may be shown, so "c" is not searched
    assert sorted(conversation.sources) == ["S1", "S2", "S3"]
    assert answer.tool_calls[-1].summary.endswith("budget spent")


async def test_chunks_already_shown_this_turn_are_not_shown_twice(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    same_page = chunk(3, page=1)  # another passage of page 1
    retriever = ScriptedRetriever({"a": [chunk(1, page=1), chunk(2)], "b": [chunk(1, page=1), same_page]})
    fake_model.script(tools(search("a"), search("b")), reply("X [S1]. Y [S3]. Z [S2]."))

    answer = await run_turn("a and b", conversation, model=model, retriever=retriever, options=options)

    second = list(fake_model.requests[1].tool_outputs.values())[1]
    assert refs(second) == ["S3"] and "already shown above: S1" in second
    assert answer.text == "X [1]. Y [1]. Z [2]."  # S1 and S3 are the same page: one reference
    assert [(c.label, c.page) for c in answer.citations] == [(1, 1), (2, 2)]


async def test_source_ids_keep_counting_across_searches_and_turns(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    retriever = ScriptedRetriever({"a": [chunk(1), chunk(2)], "b": [chunk(3)], "c": [chunk(4), chunk(1)]})
    fake_model.script(tools(search("a")), tools(search("b")), reply("A [S1] B [S3]."))
    first = await run_turn("first", conversation, model=model, retriever=retriever, options=options)
    conversation.record("first", first)
    fake_model.script(tools(search("c")), reply("C [S4], and A again [S1]."))

    second = await run_turn("follow-up", conversation, model=model, retriever=retriever, options=options)

    assert fake_model.requests[3].body["previous_response_id"] == first.final_response_id
    (output,) = fake_model.requests[4].tool_outputs.values()
    assert refs(output) == ["S4", "S1"]  # a new chunk gets S4; the old one keeps S1
    assert conversation.next_source == 5
    assert conversation.sources["S4"].id == "c4" and conversation.sources["S1"].id == "c1"
    assert second.text == "C [1], and A again [2]."
    assert [c.page for c in second.citations] == [4, 1]


async def test_the_cap_forces_an_answer_from_what_was_gathered(
    fake_model: FakeResponses, model: AsyncOpenAI, conversation: Conversation
) -> None:
    options = AgentOptions(model_fast="gpt-5-mini", model_thorough="gpt-5", max_iterations=3)
    retriever = ScriptedRetriever(default=[chunk(1)])
    fake_model.script(tools(search("a")), tools(search("b")), reply("What I found [S1]."))

    answer = await run_turn("q", conversation, model=model, retriever=retriever, options=options)

    assert len(fake_model.requests) == 3
    assert [r.body["tool_choice"] for r in fake_model.requests] == ["auto", "auto", "none"]
    assert answer.cap_hit and messages.CAP_HIT in answer.notices
    assert answer.text == "What I found [1]." and answer.final_response_id == fake_model.requests[2].response_id


async def test_a_turn_within_the_cap_is_not_flagged(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("a")), reply("Found [S1]."))

    retriever = ScriptedRetriever(default=[chunk(1)])
    answer = await run_turn("q", conversation, model=model, retriever=retriever, options=options)

    assert not answer.cap_hit and answer.notices == ()
    first, final = (request.response_id for request in fake_model.requests)
    assert answer.response_ids == (first, final) and answer.final_response_id == final
    assert answer.usage.input_tokens == 240 and answer.usage.output_tokens == 60


async def test_code_interpreter_runs_are_recorded_and_sandbox_paths_scrubbed(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    retriever = ScriptedRetriever(default=[chunk(1, text="Q1 costs 40, Q2 costs 2.")])
    fake_model.script(
        tools(search("costs")),
        reply("The total is 42 [S1]. [Download](sandbox:/mnt/data/total.csv)", code=(Code("print(40 + 2)", "42\n"),)),
    )
    heard: list[TurnEvent] = []

    async def listen(event: TurnEvent) -> None:
        heard.append(event)

    answer = await run_turn(
        "total?", conversation, model=model, retriever=retriever, options=options, run=RunOptions(events=listen)
    )

    assert [c.name for c in answer.tool_calls] == ["search_documents", "code_interpreter"]
    code_call = answer.tool_calls[1]
    assert code_call.arguments == {"code": "print(40 + 2)"} and code_call.summary.strip() == "42"
    assert answer.text == "The total is 42 [1]. Download"
    first, final = (request.response_id for request in fake_model.requests)
    heard = [e for e in heard if not isinstance(e, ModelCalled)]  # for the turn's record, not a person
    assert [(e.kind, e.status) if isinstance(e, Step) else e.response_id for e in heard] == [
        first,
        ("search", "started"),
        ("search", "done"),
        ("write", "started"),
        final,
        ("calculate", "done"),
    ]  # each response id is heard the moment it exists, before the turn goes on
    seen = [event for event in heard if isinstance(event, Step)]
    search_done, calculated = seen[1], seen[3]
    assert search_done.id == seen[0].id and [ref for ref, _ in search_done.sources] == ["S1"]
    assert calculated.detail.strip() == "42"


async def test_without_the_code_tool_neither_tool_nor_include_is_sent(
    fake_model: FakeResponses, model: AsyncOpenAI, conversation: Conversation
) -> None:
    options = AgentOptions(model_fast="m", model_thorough="m", code_interpreter=False, reasoning=False)
    fake_model.script(reply("[NOT_IN_DOCUMENTS] Nothing was searched."))

    answer = await run_turn("hello", conversation, model=model, retriever=ScriptedRetriever(), options=options)

    body = fake_model.requests[0].body
    assert [t["name"] for t in body["tools"]] == ["rewrite_query", "search_documents"]
    assert "include" not in body and "reasoning" not in body
    assert not answer.answerable and answer.text == "Nothing was searched."
    assert messages.NOT_IN_DOCUMENTS in answer.notices


async def test_thorough_profile_uses_its_model_and_effort(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("a")), reply("A [S1]."))

    answer = await run_turn(
        "q",
        conversation,
        model=model,
        retriever=ScriptedRetriever(default=[chunk(1)]),
        options=options,
        run=RunOptions(profile="thorough"),
    )

    assert {r.body["model"] for r in fake_model.requests} == {"gpt-5"}
    assert {r.body["reasoning"]["effort"] for r in fake_model.requests} == {"high"}
    assert answer.profile == "thorough"


async def test_tool_failures_become_tool_outputs(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    retriever = ScriptedRetriever(default=[chunk(1)])
    retriever.down = True
    fake_model.script(
        tools(search("a"), call("delete_everything", path="/"), call("search_documents", q="wrong")),
        reply("[NOT_IN_DOCUMENTS] Search is down."),
    )

    answer = await run_turn("q", conversation, model=model, retriever=retriever, options=options)

    outputs = list(fake_model.requests[1].tool_outputs.values())
    assert outputs[0].startswith("The search failed: Search is down.")
    assert outputs[1] == "There is no tool named delete_everything."
    assert "'query' must be a non-empty string" in outputs[2]
    assert not answer.answerable
