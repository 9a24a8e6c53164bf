"""Changed text is forgotten like a removed file: a document re-indexed under the same name without a sentence an
earlier answer cited is never cited again for it in that thread (the passage's text decides, not the file name)."""

from __future__ import annotations

from pathlib import Path

from openai import AsyncOpenAI

from bot.agent import AgentOptions
from bot.models import Chunk, Scope, passage_fingerprint
from bot.retrieval.local import LocalRetriever
from bot.store import ThreadKey
from bot.turns import FixedScope, InMemory, SilentView, TurnRecorder, TurnRequest, TurnServices, take_turn
from tests.agent.doubles import link
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, search, shown_sources, tools

SCOPE = Scope(container="hr")
THREAD = ThreadKey(team="T1", channel="C1", thread_ts="1.0")
SAID = "Employees get 30 days of paid leave a year."
KEPT = "Leave requests go to your manager."


def passages(*texts: str) -> list[Chunk]:
    return [
        Chunk(id=f"doc-p1-{n}", file="leave.md", page=None, container="hr", text=text) for n, text in enumerate(texts)
    ]


async def leave_index(tmp_path: Path, model: AsyncOpenAI) -> tuple[LocalRetriever, TurnServices]:
    """An index holding leave.md as first indexed (SAID, KEPT), and a terminal turn's services searching it."""
    index = LocalRetriever(tmp_path / "index.sqlite")
    await index.replace_file("hr", "leave.md", "v1", passages(SAID, KEPT))
    options = AgentOptions(model_fast="gpt-5-mini", model_thorough="gpt-5", link_for=link)
    services = TurnServices(
        model=model, retriever=index, options=options, conversations=InMemory(), scopes=FixedScope(SCOPE), timeout=10
    )
    return index, services


async def ask(question: str, services: TurnServices) -> str:
    request = TurnRequest(thread=THREAD, question=question, user="U1")
    answered = await take_turn(request, services=services, view=SilentView(), observer=TurnRecorder(request))
    return answered.text


async def test_a_passage_whose_text_changed_is_forgotten_with_what_earlier_answers_said_from_it(
    tmp_path: Path, fake_model: FakeResponses, model: AsyncOpenAI
) -> None:
    index, services = await leave_index(tmp_path, model)
    conversations = services.conversations
    fake_model.script(
        tools(search("paid leave days")),
        reply("You get 30 days [S1]."),
        reply("Yes, 30 days [S1]."),  # from its context: the passage as it was, no longer in the document
        reply("I can no longer find that in the documents."),  # the correction round: S1 is no source any more
    )
    first = await ask("How much paid leave?", services)
    assert "[1]" in first
    cited = (await conversations.load(THREAD)).turns[0].citations[0]
    assert [p.fingerprint for p in cited.passages] == [passage_fingerprint(SAID)]  # what it relied on, kept

    await index.replace_file("hr", "leave.md", "v2", passages("Employees get paid leave as agreed.", KEPT))
    follow_up = await ask("Really 30?", services)

    assert "[1]" not in follow_up and "30 days" not in follow_up
    assert "previous_response_id" not in fake_model.requests[2].body  # the old passage left the model's context
    saved = await conversations.load(THREAD)
    assert saved.turns[0].set_aside and saved.turns[0].answer == ""  # what it said from the old text is gone
    await index.close()


async def test_a_re_indexed_document_whose_cited_passage_is_unchanged_keeps_the_thread_as_it_was(
    tmp_path: Path, fake_model: FakeResponses, model: AsyncOpenAI
) -> None:
    index, services = await leave_index(tmp_path, model)
    fake_model.script(tools(search("paid leave days")), reply("You get 30 days [S1]."), reply("Yes, 30 days [S1]."))
    await ask("How much paid leave?", services)

    await index.replace_file("hr", "leave.md", "v2", passages(SAID, "Leave requests go to HR."))  # another passage
    follow_up = await ask("Really 30?", services)

    assert "30 days [1]" in follow_up
    assert fake_model.requests[2].body["previous_response_id"] == fake_model.requests[1].response_id
    await index.close()


async def test_only_the_answers_that_rested_on_the_changed_passage_are_set_aside(
    tmp_path: Path, fake_model: FakeResponses, model: AsyncOpenAI
) -> None:
    index, services = await leave_index(tmp_path, model)
    conversations = services.conversations
    fake_model.respond_with(cite_what_was_found)
    await ask("paid leave days", services)
    await ask("leave requests manager", services)
    saved = await conversations.load(THREAD)
    relied = [{p.id for c in turn.citations for p in c.passages} for turn in saved.turns]
    assert relied == [{"doc-p1-0"}, {"doc-p1-1"}]  # the same document, two passages

    await index.replace_file("hr", "leave.md", "v2", passages(SAID, "Leave requests go to HR."))
    await ask("anything else", services)

    saved = await conversations.load(THREAD)
    assert [turn.set_aside for turn in saved.turns] == [False, True, False]
    assert "30 days" in saved.turns[0].answer
    await index.close()


def cite_what_was_found(request: Request) -> Step:
    """Search the question; answer citing the shown source whose text shares the most words with it."""
    if not request.tool_outputs:
        return tools(search(request.user_text))
    shown = [source for output in request.tool_outputs.values() for source in shown_sources(output)]
    if not shown:
        return reply("Nothing more [NOT_IN_DOCUMENTS].")
    words = set(request.user_text.lower().split())
    best = max(shown, key=lambda source: len(words & set(source["text"].lower().split())))
    return reply(f"{'30 days' if 'paid' in words else 'Your manager'} [{best['ref']}].")
