"""One turn, for every surface: `take_turn(request, services=..., view=..., observer=...)`.

    take the thread's lock -> wait for room on the event loop -> load the conversation -> check the question's length
    and resolve the scope (once) -> forget sources out of scope or of removed documents -> run the agent -> show the
    answer -> save

Slack (mention, DM, `/ask`, the assistant, "Think harder"), `folio ask`, `folio chat` and `folio eval` all call it
with their own view and observer. A failure is shown by the view and noted by the observer, then raised for the
caller; a cancellation (shutdown, hand-back, Ctrl-C) is noted and raised, and shows nothing.

A turn that opens its own thread (`/ask`: the question restated publicly with what it searches, and answered in that
message's thread) runs its first step before the thread exists: `open_turn(request, services=...)` checks the length
and resolves the scope, so that a refusal is said to the asker alone and the restatement names what the answer
searches; the turn then runs with `TurnRequest.opened`, checking the length and resolving the scope no more. No lock
is taken for that step: a thread not yet posted has no other turn to wait for.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from bot import messages
from bot.agent import RunOptions, run_turn
from bot.agent.events import AnswerText, Listener, ResponseCreated, Step, TurnEvent
from bot.errors import FolioError, InvalidInput, StoreUnavailable
from bot.ingest.lifecycle import forget_removed
from bot.models import Answer, Conversation, Scope
from bot.turns.observer import TurnObserver
from bot.turns.request import TurnRequest, TurnScope
from bot.turns.services import TurnServices
from bot.turns.thread_files import files_container, read_shared_files, thread_reader, thread_search
from bot.turns.view import TurnView

log = logging.getLogger(__name__)

# The scope of a thread taken on before its first turn ran: never searched, since every turn resolves its own scope
# (after the lock) before the agent runs. Taking a thread on therefore reads no policy.
UNRESOLVED = Scope(containers=("(unresolved)",))


@dataclass(frozen=True)
class _Parts:
    """What one turn runs with, passed down as one value: its request, services, view, observer and held lock."""

    request: TurnRequest
    services: TurnServices
    view: TurnView
    observer: TurnObserver
    held: AbstractAsyncContextManager[object]


@dataclass
class _Reported:
    """The failure the turn already showed and noted inside the lock (so `take_turn` does not show it twice)."""

    error: BaseException | None = None


def new_conversation(request: TurnRequest) -> Conversation:
    """The conversation saved when a surface takes a new thread on, before its first turn (see `UNRESOLVED`)."""
    roots = [request.thread.thread_ts] if request.root_is_ours else []
    return Conversation(scope=UNRESOLVED, narrowing=request.tags, started_by=request.user, message_ts=roots)


async def take_turn(
    request: TurnRequest,
    *,
    services: TurnServices,
    view: TurnView,
    observer: TurnObserver,
    lock: AbstractAsyncContextManager[object] | None = None,
) -> Answer:
    """Answer `request` in its thread; `lock` is the thread's lock when the surface took its place in line already."""
    held = lock if lock is not None else services.conversations.lock(request.thread)
    reported = _Reported()
    try:
        waited = time.monotonic()
        async with held:
            observer.lock_taken(time.monotonic() - waited)
            return await _in_turn(_Parts(request, services, view, observer, held), reported)
    except asyncio.CancelledError as cancelled:  # shutdown or hand-back: the record says so, the thread nothing
        observer.failed(cancelled)
        raise
    except Exception as error:  # the store or the lock failed: every failure must reach the person
        if error is not reported.error:
            await _show(error, view, observer)
        raise
    finally:
        observer.finished()


async def _in_turn(parts: _Parts, reported: _Reported) -> Answer:
    services, observer = parts.services, parts.observer
    admitted = time.monotonic()
    await services.admit()  # after the lock, so a thread's turns keep their order
    observer.admitted(time.monotonic() - admitted)
    existing = await services.conversations.load(parts.request.thread)
    try:
        return await _answer(parts, existing)
    except Exception as error:
        reported.error = error
        ts = await _show(error, parts.view, observer)
        if ts and existing is not None:  # so that deleting the conversation removes this message too
            await _remember(services, parts.request, ts)
        raise


async def _answer(parts: _Parts, existing: Conversation | None) -> Answer:
    request, services, view, observer = parts.request, parts.services, parts.view, parts.observer
    scoped = await _scope(request, existing, services)
    observer.scoped(scoped.scope)
    conversation = existing or new_conversation(request)
    own = files_container(request.thread)  # the thread's own files are kept whatever the scope
    changed = conversation.rescope(scoped.scope, own=own) and bool(conversation.turns)  # a first turn changes nothing
    await forget_removed(conversation, services.retriever)  # a document taken out is not cited again
    await view.working(messages.THINKING_HARDER if request.profile == "thorough" else messages.WORKING)
    observer.seen()
    async with asyncio.timeout(services.timeout):
        shares = services.files if request.files else None  # None: no file, or a surface that reads none
        read = await read_shared_files(request, conversation, files=shares) if shares is not None else []
        if request.files and not request.question.strip():  # files alone: say what was read, no model call
            answer, read = files_only_answer(conversation, read), []
        else:
            answer = await run_turn(
                request.question,
                conversation,
                model=services.model,
                retriever=thread_search(services.retriever, conversation, request.thread),
                options=services.options,
                reader=thread_reader(services.retriever, conversation, request.thread),
                run=RunOptions(profile=request.profile, stream=view.writes_text(), events=_listener(parts)),
            )
    observer.answered(answer)
    notices = (*([messages.SCOPE_CHANGED] if changed else []), *read)
    if notices:  # said once: the conversation saved below holds the new scope and the files read
        answer = answer.model_copy(update={"notices": (*notices, *answer.notices)})
    turn_index = len(conversation.turns)
    conversation.record(request.question, answer, asked_by=request.user)
    ts = await view.answer(answer, scope=conversation.scope, turn_index=turn_index, basis=scoped.basis)
    if ts is not None:
        conversation.message_ts.append(ts)
    try:
        # the lock goes with the save (one round trip): the thread's next turn may start once the answer is saved
        await services.conversations.save(request.thread, conversation, release=parts.held)
    except StoreUnavailable:  # the answer is shown; say that the thread cannot continue from it
        log.exception("could not save %s", request.thread)
        await view.notice(messages.NOT_SAVED)
    return answer


def files_only_answer(conversation: Conversation, read: list[str]) -> Answer:
    """The reply to files shared without a question: what was read (or why not), and what to ask next."""
    names = ", ".join(known.name for known in conversation.thread_files) or "the files you share"
    return Answer(text="\n".join([*read, messages.THREAD_FILES_ONLY.format(names=names)]), answerable=True)


async def open_turn(request: TurnRequest, *, services: TurnServices) -> TurnScope:
    """The first step of a turn that opens its own thread (see the module): the question's length, then the scope
    with the filters typed for it (one it does not allow is refused, not dropped); raises the refusal. The caller
    shows what it opened and runs the turn with `opened=` this scope."""
    check_question(request.question, limit=services.options.max_question_chars)
    return await services.scopes.resolve(request, narrowing=request.tags, strict=True)


def check_question(question: str, *, limit: int) -> None:
    """InvalidInput, saying so, when `question` (stripped) is longer than `limit` characters: checked once a turn,
    before its scope, so that a question refused is restated nowhere."""
    length = len(question.strip())
    if length > limit:
        raise InvalidInput(messages.question_too_long(length, limit=limit))


async def _scope(request: TurnRequest, existing: Conversation | None, services: TurnServices) -> TurnScope:
    """The turn's scope, resolved once (by `open_turn` already, for a turn that opened its thread); a thread taken
    on whose very first turn is refused is given back to people (its replies are not Folio's to answer)."""
    try:
        await services.guard(request)  # over a budget or the rate cap: refused here, before any model call
        if request.opened is not None:  # its restatement names this scope: the answer searches exactly that
            return request.opened
        check_question(request.question, limit=services.options.max_question_chars)
        return await services.scopes.resolve(request, narrowing=existing.narrowing if existing else request.tags)
    except FolioError:
        if existing is not None and not existing.turns:
            await _give_back(services, request)
        raise


async def _give_back(services: TurnServices, request: TurnRequest) -> None:
    try:
        await services.conversations.delete(request.thread)
    except StoreUnavailable:
        log.warning("could not give %s back; its record expires by itself", request.thread)


def _listener(parts: _Parts) -> Listener:
    """The turn's events: each response id recorded the moment it exists; steps and answer text to the view."""
    conversations, thread, view, observer = (
        parts.services.conversations,
        parts.request.thread,
        parts.view,
        parts.observer,
    )

    async def hear(event: TurnEvent) -> None:
        observer.event(event)
        if isinstance(event, ResponseCreated):  # before the turn can fail: deleting the thread must reach it
            await conversations.add_response(thread, event.response_id)
        elif isinstance(event, Step):
            await (view.step_started(event) if event.status == "started" else view.step_ended(event))
        elif isinstance(event, AnswerText):
            await view.text(event)

    return hear


async def _show(error: Exception, view: TurnView, observer: TurnObserver) -> str | None:
    observer.failed(error)
    ts = await view.failed(error)
    if ts is not None:
        observer.seen()
    return ts


async def _remember(services: TurnServices, request: TurnRequest, ts: str) -> None:
    try:
        await services.conversations.remember_message(request.thread, ts)
    except StoreUnavailable:
        log.warning("could not record message %s of %s", ts, request.thread)
