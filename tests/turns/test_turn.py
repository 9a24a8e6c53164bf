"""The one turn, outside any surface: what the view and the observer hear when a turn fails or is handed back, and
the request's JSON (the durable record of an accepted delivery)."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from bot.agent import AgentOptions
from bot.errors import SearchUnavailable
from bot.models import Chunk, Scope, Tag
from bot.store import ThreadKey
from bot.turns import FixedScope, InMemory, SilentView, TurnRecorder, TurnRequest, TurnServices, take_turn
from tests.agent.doubles import SCOPE, ScriptedRetriever, link

REQUEST = TurnRequest(
    thread=ThreadKey(team="T1", channel="C1", thread_ts="1.0"),
    question="How much leave?",
    user="U1",
    tags=(Tag(key="year", value="2026"),),
    profile="thorough",
    delivery="event:Ev1",
)


class Watching(SilentView):
    """A view that notes what it was asked to show."""

    def __init__(self) -> None:
        self.failures: list[BaseException] = []
        self.began: list[str] = []

    async def working(self, title: str) -> None:
        self.began.append(title)

    async def failed(self, error: BaseException) -> str | None:
        self.failures.append(error)
        return "1.5"


class Stuck(ScriptedRetriever):
    """A search that never ends (until its turn is cancelled)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()

    async def search(self, query: str, scope: Scope, *, top: int) -> list[Chunk]:
        self.started.set()
        await asyncio.Event().wait()
        return []


def services(retriever: ScriptedRetriever) -> TurnServices:
    options = AgentOptions(model_fast="gpt-5-mini", model_thorough="gpt-5", link_for=link)
    return TurnServices(
        model=None, retriever=retriever, options=options, conversations=InMemory(), scopes=FixedScope(SCOPE), timeout=5
    )


def test_a_request_reads_back_from_its_json() -> None:
    assert TurnRequest.from_json(REQUEST.to_json()) == REQUEST


def test_a_private_answers_request_keeps_the_channel_it_widens_in_its_durable_record() -> None:
    """A private answer goes through the durable intake: the worker that runs it (maybe another process) must know
    whose channel scope the asker's access widens; a record written before the field existed reads as none."""
    private = dataclasses.replace(REQUEST, private_from="C0FINANCE1")
    assert TurnRequest.from_json(private.to_json()) == private
    older = json.loads(REQUEST.to_json())
    del older["private_from"]
    assert TurnRequest.from_json(json.dumps(older)).private_from is None


async def test_a_turn_handed_back_shows_no_failure_and_is_recorded_as_cancelled() -> None:
    retriever, view, observer = Stuck(), Watching(), TurnRecorder(REQUEST)
    turn = asyncio.create_task(take_turn(REQUEST, services=services(retriever), view=view, observer=observer))
    await retriever.started.wait()

    turn.cancel("hand-back")  # the process is stopping: another one runs the turn again
    with pytest.raises(asyncio.CancelledError):
        await turn

    assert view.began == ["Thinking harder about this one…"] and view.failures == []  # the turn is not over
    assert observer.record().outcome == "cancelled"


async def test_a_failed_turn_is_shown_once_recorded_and_raised() -> None:
    retriever = ScriptedRetriever()
    retriever.down = True
    view, observer = Watching(), TurnRecorder(REQUEST)

    with pytest.raises(SearchUnavailable):
        await take_turn(REQUEST, services=services(retriever), view=view, observer=observer)

    assert [type(error) for error in view.failures] == [SearchUnavailable]
    record = observer.record()
    assert record.outcome == "search_unavailable" and record.phases.first_feedback is not None
    assert record.containers == ("hr",) and record.tags == ()
