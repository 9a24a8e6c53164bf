"""A terminal turn: the one turn of `bot.turns`, with the terminal's services (no Slack, conversations in memory,
the scope named on the command line). `folio ask`, `folio chat` and `folio eval` go through here."""

from __future__ import annotations

from bot.app import Folio
from bot.models import Answer, Profile, Scope
from bot.store import ThreadKey
from bot.turns import FixedScope, InMemory, TurnObserver, TurnRequest, TurnServices, TurnView, take_turn

TERMINAL = "terminal"  # the asker and the channel of a terminal turn: there is no Slack here


def terminal_services(
    folio: Folio, scope: Scope, *, conversations: InMemory | None = None, timeout: float | None = None
) -> TurnServices:
    """What a terminal turn runs on: the model and index `open_folio` built, `scope`, conversations in memory. A
    person at the terminal stops a long answer with Ctrl-C, so no `timeout` unless asked (`folio eval` asks)."""
    return TurnServices(
        model=folio.model,
        retriever=folio.retriever,
        options=folio.options,
        conversations=conversations if conversations is not None else InMemory(),
        scopes=FixedScope(scope),
        timeout=timeout,
    )


def terminal_thread(thread: str = "1") -> ThreadKey:
    """The key of a terminal conversation; turns with the same `thread` continue one conversation."""
    return ThreadKey(team="-", channel=TERMINAL, thread_ts=thread)


def terminal_request(question: str, *, thread: str = "1", profile: Profile | None = None) -> TurnRequest:
    """A question asked in the terminal."""
    return TurnRequest(thread=terminal_thread(thread), question=question, user=TERMINAL, profile=profile)


async def ask_once(
    question: str, services: TurnServices, view: TurnView, *, thread: str = "1", profile: Profile | None = None
) -> Answer:
    """One terminal turn (nothing records it: the terminal has no turn log or metrics)."""
    request = terminal_request(question, thread=thread, profile=profile)
    return await take_turn(request, services=services, view=view, observer=TurnObserver())
