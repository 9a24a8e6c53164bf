"""One turn in a Slack thread: wait for the thread's lock, run the agent, show progress, post the answer, save.

Every failure ends in a message in the thread (see `describe_failure`), and the progress indicator is cleared.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.agent import run_turn
from bot.agent.events import Listener, ResponseCreated, Step, TurnEvent
from bot.app import Folio
from bot.errors import FolioError, LeaseLost, ModelUnavailable, SearchUnavailable, StoreUnavailable
from bot.ingest.lifecycle import forget_removed
from bot.models import Conversation, Profile, Scope, Tag
from bot.slack.progress import ThreadProgress
from bot.slack.scope import new_thread_scope, scope_for_turn
from bot.slack.stream import StreamedProgress, show_answer, streamed_progress
from bot.slack.turnlog import answered, failed, tap
from bot.store import ConversationStore, ThreadKey, ThreadLock

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class TurnRequest:
    """A question to answer in a thread. `tags` and `root_is_ours` matter only when the thread is new."""

    thread: ThreadKey
    question: str
    user: str
    is_dm: bool = False
    tags: tuple[Tag, ...] = ()
    profile: Profile | None = None
    root_is_ours: bool = False  # the thread root is Folio's `/ask` restatement, deleted with the conversation
    delivery: str | None = None  # the delivery's identity: the dedupe key end to end (bot.store.intake)

    def to_json(self) -> str:
        """Plain JSON of the fields, for the intake record."""
        fields = {**asdict(self), "tags": [[tag.key, tag.value] for tag in self.tags]}
        return json.dumps(fields, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> TurnRequest:
        fields = json.loads(text)
        fields["thread"] = ThreadKey(**fields["thread"])
        fields["tags"] = tuple(Tag(key=key, value=value) for key, value in fields["tags"])
        return cls(**fields)


def describe_failure(error: BaseException) -> str:
    """The sentence the thread shows for an error: what happened and what to do next."""
    if isinstance(error, SearchUnavailable):
        return messages.SEARCH_DOWN
    if isinstance(error, ModelUnavailable):
        return messages.MODEL_UNAVAILABLE
    if isinstance(error, StoreUnavailable):
        return messages.STORE_DOWN
    if isinstance(error, FolioError):
        return str(error)  # the others are written for the person who asked (not connected, bad filter, busy)
    if isinstance(error, TimeoutError):
        return messages.TURN_TIMED_OUT
    if isinstance(error, SlackApiError):
        outside = error.response.get("error") in {"not_in_channel", "channel_not_found"}  # private: not found
        return messages.NOT_IN_CHANNEL if outside else messages.SLACK_FAILED
    return messages.UNEXPECTED


Shown = Callable[[str], Awaitable[None]]  # told the ts of each message the turn shows, as soon as it exists


async def answer_in_thread(
    folio: Folio, client: AsyncWebClient, request: TurnRequest, lock: ThreadLock, *, resumed_ts: str | None = None,
    on_shown: Shown | None = None,
) -> None:
    """Run one turn after the ack; its place in the thread's queue was taken before the ack. `resumed_ts`: the
    message an earlier attempt of this delivery showed, updated instead of posting a second one. A lost lease
    (LeaseLost) and cancellation leave without a message: the consumer runs the turn again or hands it back."""
    store = _store(folio)
    thread = request.thread
    if resumed_ts is None:
        progress = streamed_progress(folio, client, channel=thread.channel, thread_ts=thread.thread_ts,
                                     user=request.user, team=thread.team)  # fmt: skip
    else:
        progress = ThreadProgress(client, channel=thread.channel, thread_ts=thread.thread_ts)
        progress.placeholder_ts = resumed_ts
    try:
        async with lock:
            await folio.tasks.gate.wait_for_room()  # after the lock, so a thread's turns keep their order
            existing = await store.load(request.thread)
            try:
                turn = await scope_for_turn(
                    folio.channel_policy(), folio.access, thread=request.thread, user=request.user,
                    is_dm=request.is_dm, narrowing=existing.narrowing if existing else request.tags,
                )  # fmt: skip
                conversation = existing or _new_conversation(request, turn.scope)
                changed = conversation.rescope(turn.scope)
                await forget_removed(conversation, folio.retriever)  # a document taken out is not cited again
                working = messages.THINKING_HARDER if request.profile == "thorough" else messages.WORKING
                await (progress.update(working) if resumed_ts else progress.start(working))
                await _shown(on_shown, getattr(progress, "stream_ts", None) or progress.placeholder_ts)
                await _answer(folio, request, conversation, progress, scope_changed=changed, basis=turn.basis,
                              on_shown=on_shown)  # fmt: skip
            except Exception as error:
                shown = await _report(progress, error, request)
                if shown and existing is not None:  # so that deleting the conversation removes this message too
                    await _remember(folio, request, shown)
    except LeaseLost:
        raise
    except Exception as error:  # the store or the lock failed: every failure must reach the thread
        await _report(progress, error, request)


async def _shown(on_shown: Shown | None, ts: str | None) -> None:
    if on_shown is not None and ts is not None:
        await on_shown(ts)


async def _report(progress: ThreadProgress, error: Exception, request: TurnRequest) -> str | None:
    failed(error)  # the turn's log record (bot.slack.turnlog)
    if not isinstance(error, FolioError | TimeoutError | SlackApiError):
        log.exception("turn failed in %s", request.thread, exc_info=error)
    return await progress.fail(describe_failure(error))


async def _remember(folio: Folio, request: TurnRequest, ts: str) -> None:
    try:
        await _store(folio).remember_message(request.thread, ts)
    except StoreUnavailable:
        log.warning("could not record message %s of %s", ts, request.thread)


def _store(folio: Folio) -> ConversationStore:
    assert folio.store is not None, "build_app refuses a Folio without a store"
    return folio.store


def _new_conversation(request: TurnRequest, scope: Scope) -> Conversation:
    roots = [request.thread.thread_ts] if request.root_is_ours else []
    return Conversation(scope=scope, narrowing=request.tags, started_by=request.user, message_ts=roots)


async def _answer(
    folio: Folio, request: TurnRequest, conversation: Conversation, progress: ThreadProgress, *,
    scope_changed: bool, basis: str | None, on_shown: Shown | None = None,
) -> None:
    streamed = isinstance(progress, StreamedProgress) and progress.streaming
    async with asyncio.timeout(folio.turn_timeout):
        answer = await run_turn(
            request.question, conversation, model=folio.model, retriever=folio.retriever, options=folio.options,
            profile=request.profile, stream=streamed,
            events=tap(_listener(_store(folio), request.thread, progress), scope=conversation.scope),
        )  # fmt: skip
    answered(answer)
    if scope_changed:  # said once: the conversation saved below holds the new scope
        answer = answer.model_copy(update={"notices": (messages.SCOPE_CHANGED, *answer.notices)})
    turn_index = len(conversation.turns)
    conversation.record(request.question, answer, asked_by=request.user)
    ts = await show_answer(progress, answer, scope=conversation.scope, turn_index=turn_index, basis=basis)
    await _shown(on_shown, ts)
    conversation.message_ts.append(ts)
    try:
        await _store(folio).save(request.thread, conversation)
    except StoreUnavailable:  # the answer is shown; say that the thread cannot continue from it
        log.exception("could not save %s", request.thread)
        await progress.say(messages.NOT_SAVED)


def _listener(store: ConversationStore, thread: ThreadKey, progress: ThreadProgress) -> Listener:
    """The turn's events: each response id recorded the moment it exists; steps and answer text into the stream, or
    each step's title on the progress line as it starts."""

    streamed = progress if isinstance(progress, StreamedProgress) and progress.streaming else None

    async def hear(event: TurnEvent) -> None:
        if isinstance(event, ResponseCreated):  # before the turn can fail: deleting the thread must reach it
            await store.add_response(thread, event.response_id)
        elif streamed is not None:  # task cards and answer text, into the stream
            await streamed.events(event)
        elif isinstance(event, Step) and event.status == "started":
            await progress.update(event.title)

    return hear


def claimed_conversation(folio: Folio, request: TurnRequest) -> Conversation | None:
    """The conversation a new thread starts with, saved when Folio takes the thread on; None where the policy refuses
    (the turn then says why)."""
    try:
        scope = new_thread_scope(
            folio.channel_policy(), channel=request.thread.channel, is_dm=request.is_dm, tags=request.tags
        )
        return _new_conversation(request, scope)
    except FolioError:
        return None
