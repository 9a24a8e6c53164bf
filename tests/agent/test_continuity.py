"""Citation corrections, expired history, deletion, and falling back to search-only when the model is down."""

from __future__ import annotations

import openai
import pytest
from openai import AsyncOpenAI

from bot import messages
from bot.agent import AgentOptions, delete_responses, run_turn
from bot.errors import SearchUnavailable
from bot.models import Citation, Conversation, Turn
from tests.agent.doubles import SCOPE, ScriptedRetriever, chunk
from tests.fakes.openai_responses import FakeResponses, error, reply, search, tools


async def test_a_fabricated_marker_is_sent_back_once_then_stripped(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    retriever = ScriptedRetriever(default=[chunk(1)])
    fake_model.script(
        tools(search("notice")),
        reply("Notice is one month [S1]; probation is a week [S9]."),
        reply("Notice is one month [S1]; probation is a week [S9]."),  # the correction did not help
    )

    answer = await run_turn("notice?", conversation, model=model, retriever=retriever, options=options)

    first_answer, correction = fake_model.requests[1], fake_model.requests[2]
    assert correction.body["previous_response_id"] == first_answer.response_id  # it continues the answer it corrects
    assert "S9" in correction.user_text and "S1" in correction.user_text  # names the unknown id and the valid ones
    assert correction.body["tool_choice"] == "none"
    assert answer.text == "Notice is one month [1]; probation is a week."
    assert answer.removed_markers == ("S9",)
    assert [(c.label, c.page) for c in answer.citations] == [(1, 1)]
    assert answer.final_response_id == correction.response_id
    assert answer.response_ids == tuple(r.response_id for r in fake_model.requests)


async def test_a_plain_label_the_model_writes_is_sent_back_and_never_shown_as_a_citation(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    # Issue 18, item 2: "[1]" in model text passed as is (with links off, a checked citation is a plain [1] too), and
    # no correction round ran.
    retriever = ScriptedRetriever(default=[chunk(1), chunk(2, file="plan.pdf")])
    fake_model.script(
        tools(search("notice")),
        reply("Notice is one month [S1]; probation is a week [2]."),
        reply("Notice is one month [S1]; probation is a week [2]."),  # the correction did not help
    )

    answer = await run_turn("notice?", conversation, model=model, retriever=retriever, options=options)

    assert "[2]" in fake_model.requests[2].user_text  # the correction round names it
    assert answer.text == "Notice is one month [1]; probation is a week."
    assert [c.file for c in answer.citations] == ["handbook.pdf"] and answer.removed_markers == ("[2]",)


async def test_a_corrected_answer_replaces_the_first_one(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("notice")), reply("Notice is one month."), reply("Notice is one month [S1]."))

    answer = await run_turn(
        "notice?", conversation, model=model, retriever=ScriptedRetriever(default=[chunk(1)]), options=options
    )

    assert "without a single [S#] source marker" in fake_model.requests[2].user_text
    assert answer.text == "Notice is one month [1]." and answer.answerable


async def test_an_answer_the_documents_do_not_support_is_marked_unanswerable(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(
        tools(search("pets")),
        reply("Pets are welcome on Fridays."),
        reply("[NOT_IN_DOCUMENTS] The handbook does not mention pets."),
    )

    answer = await run_turn(
        "pets?", conversation, model=model, retriever=ScriptedRetriever(default=[chunk(1)]), options=options
    )

    assert not answer.answerable and answer.citations == ()
    assert answer.text == "The handbook does not mention pets."
    assert messages.NOT_IN_DOCUMENTS in answer.notices


def _earlier(conversation: Conversation) -> None:
    conversation.last_response_id = "resp_gone"
    conversation.turns.append(
        Turn(
            question="How long is the notice period?",
            answer="One month [1].",
            citations=(Citation(label=1, file="handbook.pdf", title="handbook.pdf", page=7, container="hr"),),
        )
    )


@pytest.mark.parametrize("status", [400, 404], ids=["service-400", "proxy-404"])
async def test_expired_history_is_retried_once_then_rebuilt_from_stored_turns(
    status: int, options: AgentOptions, conversation: Conversation
) -> None:
    _earlier(conversation)
    with FakeResponses(not_found_status=status) as fake:
        fake.script(tools(search("notice during probation")), reply("A week [S1]."))
        async with fake.client() as model:
            answer = await run_turn(
                "And during probation?",
                conversation,
                model=model,
                retriever=ScriptedRetriever(default=[chunk(1)]),
                options=options,
            )
        assert fake.problems == []

    first = fake.requests[0]  # the two rejected attempts never reached the script
    assert "previous_response_id" not in first.body
    contents = [item["content"] for item in first.input_items]
    assert contents[1:] == [
        "How long is the notice period?",
        "One month [1].\n\nReferences: [1] handbook.pdf, page 7",
        "And during probation?",
    ]
    assert answer.notices == (messages.HISTORY_RESTORED,)
    assert answer.text == "A week [1]." and answer.final_response_id == fake.requests[-1].response_id


async def test_expired_history_with_nothing_stored_starts_fresh(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    conversation.last_response_id = "resp_gone"
    fake_model.script(tools(search("q")), reply("Fresh [S1]."))

    retriever = ScriptedRetriever(default=[chunk(1)])
    answer = await run_turn("q", conversation, model=model, retriever=retriever, options=options)

    assert fake_model.requests[0].input_items == [{"role": "user", "content": "q"}]
    assert answer.notices == (messages.HISTORY_EXPIRED,)


async def test_deleting_removes_every_response_and_tolerates_ones_already_gone(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("a")), reply("A [S1]."))
    retriever = ScriptedRetriever(default=[chunk(1)])
    answer = await run_turn("q", conversation, model=model, retriever=retriever, options=options)
    conversation.record("q", answer)
    gone, kept = conversation.response_ids
    fake_model.expire(gone)  # already gone at the provider

    deletion = await delete_responses(model, conversation.response_ids)

    assert deletion.left == [] and deletion.deleted == 1  # the expired one was not there to delete
    assert fake_model.deleted == [kept] and fake_model.stored_ids() == []
    with pytest.raises(openai.NotFoundError):
        await model.responses.retrieve(kept)


async def test_deletion_reports_ids_it_could_not_delete() -> None:
    with FakeResponses() as fake:
        model = fake.client()
    try:  # the server is gone: every id stays for a later attempt
        deletion = await delete_responses(model, ["resp_a", "resp_b", "resp_a"])
        assert deletion.left == ["resp_a", "resp_b"] and deletion.deleted == 0
    finally:
        await model.close()


async def test_model_outage_after_sdk_retries_falls_back_to_search_only(
    fake_model: FakeResponses, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(error(500), error(503))
    retriever = ScriptedRetriever(default=[chunk(1, text="Notice is one month."), chunk(2)])
    async with fake_model.client(max_retries=1) as model:  # the SDK retries once, then gives up
        answer = await run_turn("notice?", conversation, model=model, retriever=retriever, options=options)

    assert len(fake_model.requests) == 2
    assert answer.mode == "search_only" and answer.notices == (messages.MODEL_DOWN,)
    assert answer.text.startswith("“Notice is one month.” [1]")
    # Only the passage holding the question's word is quoted; "Passage 2 says fact number 2." does not answer it.
    assert [c.page for c in answer.citations] == [1] and answer.citations[0].url.endswith("#page=1")
    assert answer.final_response_id is None


async def test_model_outage_mid_turn_keeps_the_ids_it_created(
    fake_model: FakeResponses, model: AsyncOpenAI, options: AgentOptions, conversation: Conversation
) -> None:
    fake_model.script(tools(search("a")), error(503, "server_error"))

    retriever = ScriptedRetriever(default=[chunk(1)])
    answer = await run_turn("q", conversation, model=model, retriever=retriever, options=options)

    assert answer.mode == "search_only" and answer.response_ids == (fake_model.requests[0].response_id,)
    assert [c.page for c in answer.citations] == [1]  # the passage the model saw before failing is still quoted
    assert answer.final_response_id is None and [c.name for c in answer.tool_calls] == ["search_documents"]


async def test_no_model_answers_search_only(options: AgentOptions, conversation: Conversation) -> None:
    retriever = ScriptedRetriever(default=[chunk(4)])
    answer = await run_turn("which fact number?", conversation, model=None, retriever=retriever, options=options)

    assert answer.mode == "search_only" and answer.notices == (messages.NO_MODEL,)
    assert [c.page for c in answer.citations] == [4]

    nothing = await run_turn("q", Conversation(scope=SCOPE), model=None, retriever=ScriptedRetriever(), options=options)
    assert not nothing.answerable and nothing.text == messages.NOT_IN_DOCUMENTS

    down = ScriptedRetriever()
    down.down = True
    with pytest.raises(SearchUnavailable):
        await run_turn("q", Conversation(scope=SCOPE), model=None, retriever=down, options=options)


async def test_verification_flags_a_citation_its_page_does_not_support(
    fake_model: FakeResponses, model: AsyncOpenAI, conversation: Conversation
) -> None:
    options = AgentOptions(model_fast="gpt-5-mini", model_thorough="gpt-5", verify_citations=True)
    retriever = ScriptedRetriever(default=[chunk(1), chunk(2)])
    fake_model.script(tools(search("a")), reply("One [S1]. Two [S2]."))

    def judge(request):  # type: ignore[no-untyped-def]
        return reply("UNSUPPORTED" if "Passage 2" in request.user_text else "SUPPORTED")

    fake_model.respond_with(judge)
    answer = await run_turn("q", conversation, model=model, retriever=retriever, options=options)

    checks = fake_model.requests[2:]
    assert len(checks) == 2 and all(r.body["store"] is False for r in checks)
    assert answer.notices == (
        "I could not confirm that the source supports the sentences cited with [2]; check those pages.",
    )
    assert len(answer.response_ids) == 2  # unstored checks leave nothing to delete
