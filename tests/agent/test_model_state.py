"""A model service that keeps no responses (FOLIO_MODEL_STATE=client): what each call resends, what a thread keeps,
and how its refusal of previous_response_id is told apart from an expired response."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from bot.agent import AgentOptions, run_turn
from bot.agent.provider_errors import Call, Failure, classify
from bot.agent.state import ModelState, bounded
from bot.errors import HistoryExpired, KeepsNoResponses
from bot.models import Conversation, Turn
from tests.agent.doubles import SCOPE, ScriptedRetriever, chunk, link
from tests.fakes.model_servers import LLAMA_NO_PREVIOUS
from tests.fakes.openai_responses import FakeResponses, error, reply, search, tools

CHAINED = Call(model="local", profile="fast", chained=True)


@pytest.fixture
def llama() -> Iterator[FakeResponses]:
    with FakeResponses(server="llama.cpp") as fake:
        yield fake
        assert fake.problems == []


def client_options(history_chars: int = 48_000) -> AgentOptions:
    return AgentOptions(
        model_fast="local",
        model_thorough="local",
        reasoning=False,
        code_interpreter=False,
        link_for=link,
        model_state=ModelState("client"),
        history_chars=history_chars,
    )


def answered_calls(group: list[dict]) -> bool:
    """Whether every function call of a kept group has its output in the same group."""
    calls = {item["call_id"] for item in group if item.get("type") == "function_call"}
    outputs = {item["call_id"] for item in group if item.get("type") == "function_call_output"}
    return calls == outputs


async def test_a_thread_keeps_its_newest_turns_within_the_bound_whole_and_the_next_call_resends_them(
    llama: FakeResponses,
) -> None:
    retriever = ScriptedRetriever(default=[chunk(1), chunk(2)])
    questions = ["What is the notice period?", "And for managers?", "What about probation?"]
    for number in range(3):
        llama.script(tools(search(f"query {number}")), reply(f"Answer {number} [S1]."))
    conversation = Conversation(scope=SCOPE)
    model = llama.client()
    try:
        sizes, kept_before = [], []
        for question in questions:
            kept_before.append([item for group in conversation.model_items for item in group])
            await run_turn(
                question, conversation, model=model, retriever=retriever, options=client_options(history_chars=1_700)
            )
            sizes.append(len(json.dumps(conversation.model_items[-1], separators=(",", ":"))))
    finally:
        await model.close()

    assert sum(sizes[1:]) <= 1_700 < sum(sizes)  # the bound holds two turns, not three
    kept = conversation.model_items
    assert [group[0]["content"] for group in kept] == questions[1:]  # the oldest turn went first, whole
    assert all(answered_calls(group) for group in kept)
    third_first_call = llama.requests[4]
    assert third_first_call.input_items == [*kept_before[2], {"role": "user", "content": questions[2]}]
    assert [item["content"] for item in kept_before[2] if item.get("role") == "user"] == questions[:2]
    assert llama.refused == []


def test_the_bound_drops_whole_groups_oldest_first_and_always_keeps_the_newest() -> None:
    groups = [
        [{"role": "user", "content": "a" * 100}],
        [{"role": "user", "content": "b" * 100}],
        [{"role": "user", "content": "c" * 5000}],
    ]

    assert bounded(groups, max_chars=300) == [groups[2]]  # too big alone, yet a follow-up needs it
    assert bounded(groups[:2], max_chars=300) == groups[:2]
    assert bounded(groups[:2], max_chars=150) == [groups[1]]


async def test_a_thread_too_long_for_the_model_is_restated_shorter_and_keeps_only_this_turn(
    llama: FakeResponses,
) -> None:
    conversation = Conversation(scope=SCOPE)
    llama.script(
        reply("Five days."),
        error(
            400,
            message="request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
            kind="exceed_context_size_error",
        ),
        reply("Ten days."),
    )
    model = llama.client()
    try:
        await run_turn("Notice?", conversation, model=model, retriever=ScriptedRetriever(), options=client_options())
        await run_turn("And leave?", conversation, model=model, retriever=ScriptedRetriever(), options=client_options())
    finally:
        await model.close()

    restated = llama.requests[-1].input_items
    assert [item.get("role") for item in restated] == ["user"]  # one turn: its older half is dropped, none is left
    assert [group[0]["content"] for group in conversation.model_items] == ["And leave?"]  # nothing fitted before it


def test_forgetting_a_source_drops_the_kept_items_that_quote_it() -> None:
    conversation = Conversation(scope=SCOPE, sources={"S1": chunk(1)}, model_items=[[{"role": "user", "content": "q"}]])

    conversation.forget(lambda c: c.id == "c1")

    assert conversation.model_items == []


def test_llama_cpps_refusal_of_previous_response_id_is_told_apart_from_an_expired_response() -> None:
    refused = classify(Failure(400, message=f"Error code: 400 - {LLAMA_NO_PREVIOUS}"), CHAINED)
    expired = classify(
        Failure(
            400,
            "previous_response_not_found",
            "previous_response_id",
            message="Previous response with id 'resp_1' not found.",
        ),
        CHAINED,
    )

    assert isinstance(refused, KeepsNoResponses) and refused.setting == "FOLIO_MODEL_STATE"
    assert isinstance(expired, HistoryExpired) and not isinstance(expired, KeepsNoResponses)


async def test_a_thread_begun_on_a_server_that_kept_responses_continues_on_one_that_keeps_none(
    llama: FakeResponses,
) -> None:
    # The operator pointed Folio at llama-server: the thread's stored chain is gone, its turns are restated in the
    # one assistant form llama-server takes (it refuses {"role": "assistant", "content": "..."}).
    conversation = Conversation(
        scope=SCOPE, last_response_id="resp_at_openai", turns=[Turn(question="Notice?", answer="One month [1].")]
    )
    options = AgentOptions(
        model_fast="local", model_thorough="local", reasoning=False, code_interpreter=False, link_for=link
    )  # (auto, the default)
    llama.script(reply("Two weeks."))
    model = llama.client()
    try:
        answer = await run_turn(
            "And in probation?", conversation, model=model, retriever=ScriptedRetriever(), options=options
        )
    finally:
        await model.close()

    assert llama.refused == [LLAMA_NO_PREVIOUS] and answer.text.startswith("Two weeks")
    [request] = llama.requests
    assert [(item.get("role"), item.get("type")) for item in request.input_items] == [
        ("system", None),
        ("user", None),
        ("assistant", "message"),
        ("user", None),
    ]
    assert request.input_items[2]["content"][0]["text"] == "One month [1]." and options.model_state.stateless
    restated, kept = conversation.model_items  # the next call resends both: the thread's first turn is not lost
    assert restated == request.input_items[:3] and kept[0] == {"role": "user", "content": "And in probation?"}


async def test_client_mode_on_openai_resends_reasoning_items_with_their_encrypted_content(
    fake_model: FakeResponses,
) -> None:
    # OpenAI refuses a function call resent without the reasoning item before it ("... was provided without its
    # required 'reasoning' item"); with store=false only its encrypted content can stand for it.
    fake_model.script(tools(search("notice"), reasoning="The handbook will say."), reply("One month [S1]."))
    options = AgentOptions(
        model_fast="gpt-5-mini", model_thorough="gpt-5", link_for=link, model_state=ModelState("client")
    )
    model = fake_model.client()
    try:
        answer = await run_turn(
            "Notice?",
            Conversation(scope=SCOPE),
            model=model,
            retriever=ScriptedRetriever(default=[chunk(1)]),
            options=options,
        )
    finally:
        await model.close()

    assert answer.text.startswith("One month") and fake_model.stored_ids() == []
    first, resent = fake_model.requests
    assert "reasoning.encrypted_content" in first.body["include"] and first.body["store"] is False
    assert [item.get("type") for item in resent.input_items] == [
        None,
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert resent.input_items[1]["encrypted_content"].startswith("gAAAAB")


async def test_a_thinking_model_on_llama_cpp_gets_its_reasoning_back_as_text(llama: FakeResponses) -> None:
    llama.script(tools(search("notice"), reasoning="Search the handbook."), reply("One month [S1]."))
    model = llama.client()
    try:
        answer = await run_turn(
            "Notice?",
            Conversation(scope=SCOPE),
            model=model,
            retriever=ScriptedRetriever(default=[chunk(1)]),
            options=client_options(),
        )
    finally:
        await model.close()

    assert answer.text.startswith("One month") and llama.refused == []
    first, resent = llama.requests
    assert "include" not in first.body  # FOLIO_REASONING=false, no code interpreter: nothing to ask for
    [thought] = [item for item in resent.input_items if item.get("type") == "reasoning"]
    assert thought["content"] == [{"type": "reasoning_text", "text": "Search the handbook."}]


# The fields of the Conversation record the previous release wrote and reads (`git show abb07df:bot/models.py`):
# that Conversation forbids any other, so a record carrying one more is "unreadable" to an older replica.
PREVIOUS_RELEASE_FIELDS = {
    "scope",
    "narrowing",
    "profile",
    "last_response_id",
    "sources",
    "next_source",
    "turns",
    "response_ids",
    "started_by",
    "message_ts",
    "answers_set_aside",
}


@pytest.mark.parametrize("mode", ["server", "auto"])
async def test_a_record_written_for_a_service_that_keeps_responses_is_readable_by_the_previous_release(
    fake_model: FakeResponses, mode: str
) -> None:
    # A rolling upgrade runs both releases side by side: the older replica must go on reading the thread.
    fake_model.script(reply("I do not know."), tools(search("probation")), reply("Two weeks [S1]."))
    options = AgentOptions(
        model_fast="gpt-5-mini",
        model_thorough="gpt-5",
        reasoning=False,
        code_interpreter=False,
        link_for=link,
        model_state=ModelState(mode),
    )  # type: ignore[arg-type]
    conversation = Conversation(scope=SCOPE)
    model = fake_model.client()
    records = []
    try:
        for question in ("Notice?", "And in probation?"):  # a turn without a tool round, then one with
            answer = await run_turn(
                question, conversation, model=model, retriever=ScriptedRetriever(default=[chunk(1)]), options=options
            )
            conversation.record(question, answer)
            records.append(conversation.model_dump_json())
    finally:
        await model.close()

    assert [set(json.loads(record)) - PREVIOUS_RELEASE_FIELDS for record in records] == [set(), set()]
    assert Conversation.model_validate_json(records[-1]) == conversation


def test_a_record_with_kept_items_reads_back_with_them() -> None:
    kept = [[{"role": "user", "content": "Notice?"}]]
    record = Conversation(scope=SCOPE, model_items=kept).model_dump_json()
    assert Conversation.model_validate_json(record).model_items == kept
