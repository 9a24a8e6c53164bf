"""What the buttons under an answer do after the ack: store feedback, think harder, delete the conversation.

Each holds the thread's lock, so it never interleaves with a running turn, and answers the clicker with an
ephemeral message in the thread, failures included.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from openai import AsyncOpenAI
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.agent import delete_responses
from bot.models import Feedback
from bot.slack.assistant import clear_thread
from bot.slack.door import start_turn
from bot.slack.failures import describe_failure
from bot.slack.services import SlackFolio
from bot.store import ConversationStore, ThreadKey
from bot.turns import TurnRequest
from bot.turns.thread_files import forget_thread_files

log = logging.getLogger(__name__)


async def tell(client: AsyncWebClient, thread: ThreadKey, user: str, text: str) -> None:
    """An ephemeral message to `user` in the thread; never raises."""
    try:
        await client.chat_postEphemeral(channel=thread.channel, thread_ts=thread.thread_ts, user=user, text=text)
    except Exception:  # Slack failing too: log, there is nowhere else to say it
        log.exception("could not tell %s in %s: %s", user, thread, text)


async def store_feedback(
    folio: SlackFolio, client: AsyncWebClient, thread: ThreadKey, user: str, turn: int, feedback: Feedback
) -> None:
    """Save a helpful / not helpful vote on one answer."""
    try:
        store = _store(folio)
        async with store.lock(thread):
            saved = await store.set_feedback(thread, turn, feedback)
    except Exception as error:
        await tell(client, thread, user, describe_failure(error))
        return
    await tell(client, thread, user, messages.FEEDBACK_THANKS if saved else messages.CONVERSATION_GONE)


async def think_harder(
    folio: SlackFolio, client: AsyncWebClient, thread: ThreadKey, user: str, turn: int, is_dm: bool
) -> None:
    """Ask the question of `turn` again, with the thorough profile, as a new turn of the thread."""
    try:
        conversation = await _store(folio).load(thread)
    except Exception as error:
        await tell(client, thread, user, describe_failure(error))
        return
    if conversation is None or not 0 <= turn < len(conversation.turns):
        await tell(client, thread, user, messages.CONVERSATION_GONE)
        return
    question = conversation.turns[turn].question
    request = TurnRequest(thread=thread, question=question, user=user, is_dm=is_dm, profile="thorough")
    await start_turn(folio, client, request)


async def answer_again(
    folio: SlackFolio, client: AsyncWebClient, thread: ThreadKey, user: str, is_dm: bool, note: str | None
) -> None:
    """The watch note's button: ask the thread's last question again, as a new turn, from today's documents. Its
    trace names the change that triggered it, read from the note Folio kept (`note`, its id, is all the click
    carries); a note unknown, expired or of another thread triggers nothing: the question is asked again plainly."""
    try:
        conversation = await _store(folio).load(thread)
        trigger = await _trigger(_store(folio), thread, note)
    except Exception as error:
        await tell(client, thread, user, describe_failure(error))
        return
    asked = [turn.question for turn in conversation.turns if turn.question] if conversation else []
    if conversation is None or not asked:
        await tell(
            client, thread, user, messages.CONVERSATION_GONE if conversation is None else messages.WATCH_NOTHING_TO_ASK
        )
        return
    request = TurnRequest(thread=thread, question=asked[-1], user=user, is_dm=is_dm, trigger=trigger)
    await start_turn(folio, client, request)


async def _trigger(store: ConversationStore, thread: ThreadKey, note_id: str | None) -> str | None:
    """What triggered a re-answer, for its trace: the change of the note `note_id`, when Folio posted that note in
    this very thread (a click's value can name any id)."""
    note = await store.outbox().sent(note_id) if note_id else None
    if note is None or note.thread != thread or not note.trigger:
        if note_id:
            log.info("Answer again in %s names no note of that thread: asked again without a trigger", thread)
        return None
    return f"{note.trigger} (watch note {note.id})"


async def delete_conversation(folio: SlackFolio, client: AsyncWebClient, thread: ThreadKey, user: str) -> None:
    """Delete Folio's messages, the provider's stored responses and the record; resumable when half done."""
    try:
        store = _store(folio)
        async with store.lock(thread):
            conversation = await store.load(thread)
            if conversation is None:
                await tell(client, thread, user, messages.CONVERSATION_GONE)
                return
            if user != conversation.started_by and not await _is_workspace_admin(client, user):
                await tell(client, thread, user, messages.delete_not_allowed(conversation.started_by))
                return
            left_ids, deleted = await _delete_responses(folio.model, conversation.response_ids)
            left_ts = [ts for ts in conversation.message_ts if not await _delete_message(client, thread.channel, ts)]
            await forget_thread_files(thread, folio.retriever, folio.documents)  # the files shared in the thread
            if left_ids or left_ts:
                await store.record_remaining(thread, conversation, response_ids=left_ids, message_ts=left_ts)
                await tell(client, thread, user, messages.delete_incomplete(len(left_ids) + len(left_ts)))
                return
            await clear_thread(folio.access, client, thread)  # the assistant thread's greeting, title and keys
            await store.delete(thread)
            await folio.stores.feedback.forget_thread(thread)  # it quotes the conversation
    except Exception as error:
        log.warning("deleting %s failed", thread, exc_info=True)
        await tell(client, thread, user, describe_failure(error))
        return
    done = messages.deleted(messages=len(conversation.message_ts), responses=deleted)
    await tell(client, thread, user, done)


def _store(folio: SlackFolio) -> ConversationStore:
    return folio.store


async def _delete_responses(model: AsyncOpenAI | None, response_ids: Sequence[str]) -> tuple[list[str], int]:
    """The ids left for a later attempt, and how many responses the service held and deleted now."""
    if not response_ids:
        return [], 0
    if model is None:  # made while a model was configured; keep them until one is again
        return list(response_ids), 0
    deletion = await delete_responses(model, response_ids)
    return deletion.left, deletion.deleted


async def _delete_message(client: AsyncWebClient, channel: str, ts: str) -> bool:
    try:
        await client.chat_delete(channel=channel, ts=ts)
    except SlackApiError as exc:
        if exc.response.get("error") == "message_not_found":  # gone already
            return True
        log.warning("could not delete message %s: %s", ts, exc.response.get("error"))
        return False
    return True


async def _is_workspace_admin(client: AsyncWebClient, user: str) -> bool:
    """Whether Slack says `user` administers the workspace (admin or owner): who may delete anyone's conversation.
    Not Folio's own admins (`admins:` in channels.yaml, who read traces: bot.slack.why.is_admin)."""
    try:
        response = await client.users_info(user=user)
    except SlackApiError as exc:
        log.warning("users.info failed for %s: %s", user, exc.response.get("error"))
        return False
    profile = response.get("user") or {}
    return bool(profile.get("is_admin") or profile.get("is_owner") or profile.get("is_primary_owner"))
