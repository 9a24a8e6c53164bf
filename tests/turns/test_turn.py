"""The one turn, outside any surface: what the view and the observer hear when a turn fails or is handed back, the
request's JSON (the durable record of an accepted delivery), and the checks a turn makes once before it searches."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from bot.agent import AgentOptions
from bot.errors import InvalidInput, SearchUnavailable
from bot.models import Chunk, Scope, Tag
from bot.store import ThreadKey
from bot.turns import (
    FixedScope,
    InMemory,
    Scopes,
    SilentView,
    TurnRecorder,
    TurnRequest,
    TurnScope,
    TurnServices,
    take_turn,
)
from bot.turns.turn import open_turn
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


class CountedScopes:
    """A scope of container `hr` narrowed by the thread's filters, counting how often a turn resolved it."""

    def __init__(self) -> None:
        self.resolved: list[tuple[Tag, ...]] = []

    async def resolve(self, request: TurnRequest, *, narrowing: tuple[Tag, ...], strict: bool = False) -> TurnScope:
        self.resolved.append(narrowing)
        return TurnScope(Scope(containers=SCOPE.containers, tags=narrowing))


def services(retriever: ScriptedRetriever, *, scopes: Scopes | None = None, max_chars: int = 4000) -> TurnServices:
    options = AgentOptions(model_fast="gpt-5-mini", model_thorough="gpt-5", link_for=link, max_question_chars=max_chars)
    return TurnServices(
        model=None,
        retriever=retriever,
        options=options,
        conversations=InMemory(),
        scopes=scopes or FixedScope(SCOPE),
        timeout=5,
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


def test_an_ask_request_keeps_the_scope_it_was_restated_with_in_its_durable_record() -> None:
    """A resumed `/ask` (its first worker died) searches the scope its public restatement named, not another one."""
    opened = TurnScope(Scope(containers=("hr", "legal"), tags=(Tag(key="year", value="2026"),)), "what you may read")
    ask = dataclasses.replace(REQUEST, root_is_ours=True, opened=opened)
    assert TurnRequest.from_json(ask.to_json()) == ask
    assert TurnRequest.from_json(REQUEST.to_json()).opened is None
    damaged = json.loads(ask.to_json())
    damaged["opened"]["scope"]["containers"] = []  # a record that would search nothing, or anything: unreadable
    with pytest.raises(ValueError, match="at least one container"):  # the consumer drops it, saying so in its log
        TurnRequest.from_json(json.dumps(damaged))


async def test_a_question_longer_than_the_cap_is_refused_before_its_scope_is_resolved() -> None:
    scopes, view = CountedScopes(), Watching()
    long = dataclasses.replace(REQUEST, question="Why? " * 24)  # 119 characters stripped; the cap is 100

    with pytest.raises(InvalidInput) as refused:
        await take_turn(
            long,
            services=services(ScriptedRetriever(), scopes=scopes, max_chars=100),
            view=view,
            observer=TurnRecorder(long),
        )

    assert str(refused.value) == (
        "Your question is 119 characters long; I take questions of up to 100. Ask it more briefly, or in parts."
    )
    assert view.failures == [refused.value] and scopes.resolved == []
    short = dataclasses.replace(REQUEST, question="Why? " * 20)  # 99 characters stripped
    await take_turn(
        short,
        services=services(ScriptedRetriever(), scopes=scopes, max_chars=100),
        view=view,
        observer=TurnRecorder(short),
    )
    assert len(scopes.resolved) == 1


async def test_a_turn_opened_before_its_thread_existed_searches_that_scope_and_resolves_no_other() -> None:
    """`/ask`: `open_turn` checks the question and resolves the scope with the typed filters; the turn in the thread
    the restatement opened searches exactly that scope, without resolving it again."""
    scopes, retriever = CountedScopes(), ScriptedRetriever()
    opened = await open_turn(REQUEST, services=services(retriever, scopes=scopes))
    answered = dataclasses.replace(REQUEST, opened=opened)  # what the restatement names, in its thread
    await take_turn(
        answered, services=services(retriever, scopes=scopes), view=Watching(), observer=TurnRecorder(answered)
    )

    assert scopes.resolved == [REQUEST.tags]  # once, by open_turn
    assert retriever.scopes and set(retriever.scopes) == {opened.scope} == {Scope(container="hr", tags=REQUEST.tags)}


async def test_open_turn_refuses_an_over_long_question_before_any_scope() -> None:
    scopes = CountedScopes()
    long = dataclasses.replace(REQUEST, question="x" * 101)

    with pytest.raises(InvalidInput, match="101 characters"):
        await open_turn(long, services=services(ScriptedRetriever(), scopes=scopes, max_chars=100))

    assert scopes.resolved == []


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
