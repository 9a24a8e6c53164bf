"""Posting the watch's notes: each claimed from the outbox under a lease, posted with Slack message metadata that
names it, then marked posted. A note claimed before (its poster died, or Slack failed after posting) is looked for
in its thread first (`conversations.replies` with `include_all_metadata`), so none is posted twice. While a poster
posts, it renews its lease (every third of it, the one lease rule: bot.store.lease), so a post slower than the lease
is not taken over and posted again by another poster; only a poster that stopped renewing (it died, or its event
loop stalled for a whole lease) hands its note on.

Who posts: the command that found the notes (`folio sync`, `index`, `remove`) when it has a Slack token, right
after finding them (the common case: one process, nothing waits); every `folio serve` worker as it starts and then
every FOLIO_WATCH_SWEEP_SECONDS (`posting_every`), and `folio watch --post`, for whatever is left (a syncer without a
Slack token, a poster that died, a Slack outage). Workers sweeping at once share the notes out: each is claimed by one.
The Web API client the caller passes is Folio's own, so posts keep its per-channel pace.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.errors import FolioError, ThreadBusy
from bot.store import ConversationStore
from bot.store.lease import renew_every
from bot.store.watch import Claimed, Note, Outbox
from bot.tasks import every

log = logging.getLogger(__name__)

# What leaves the notes queued for the next run: Redis or Slack away (slack_sdk does not wrap aiohttp's errors).
NOT_POSTED = (FolioError, SlackClientError, aiohttp.ClientError, TimeoutError)

ACTION_ANSWER_AGAIN = "folio_answer_again"
NOTE_EVENT = "folio_watch_note"  # the metadata event_type a note is posted with, and looked for by
LEASE_SECONDS = 60.0  # a poster holds a note this long; one that died leaves it to the next after that
REMEMBER_WAIT = 20.0  # seconds a posted note waits for its thread's lock to join the record
_GONE = {"channel_not_found", "is_archived", "not_in_channel", "thread_not_found", "message_not_found"}
_REPLIES_PAGES = 10  # a thread's replies read back looking for a note: at most this many pages of 200


def note_blocks(note: Note) -> list[dict[str, Any]]:
    """The note as a person sees it: what changed, and the button that answers again from today's documents."""
    button = {
        "type": "button",
        "action_id": ACTION_ANSWER_AGAIN,
        "value": json.dumps({"turn": -1, "note": note.id}),
        "text": {"type": "plain_text", "text": messages.BUTTON_ANSWER_AGAIN},
    }
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": note.text[:3000]}},
        {"type": "actions", "block_id": "folio_watch", "elements": [button]},
    ]


async def post_notes(
    store: ConversationStore, slack: AsyncWebClient, *, limit: int = 1000, lease: float = LEASE_SECONDS
) -> int:
    """Post the notes due, one at a time; how many were posted. Stops at the first Slack failure that is not the
    thread's own (rate limits, an outage): the note stays queued and its lease hands it to a later run."""
    outbox, posted = store.outbox(), 0
    for _ in range(limit):
        claimed = await outbox.claim(lease=lease)
        if claimed is None:
            break
        note = claimed.note
        try:
            async with _held(outbox, claimed, lease=lease):
                if claimed.tries > 1 and await _in_thread(slack, note):
                    await outbox.posted(note)  # posted by a run that died before saying so
                    continue
                ts = await _post(slack, note)
        except SlackApiError as exc:
            error = str(exc.response.get("error"))
            if error in _GONE:  # the thread or channel went, or Folio left it: nowhere to tell
                log.info("watch note %s not posted in %s: %s", note.id, note.thread, error)
                await outbox.posted(note)
                continue
            log.warning("watch note %s: Slack answered %s; it stays queued", note.id, error)
            break
        await outbox.posted(note)
        await _remember(store, note, ts)
        posted += 1
    return posted


@asynccontextmanager
async def _held(outbox: Outbox, claimed: Claimed, *, lease: float) -> AsyncIterator[None]:
    """Keep the note's lease while the block runs (a slow Slack): renewed every third of it until the block ends."""

    async def renew() -> None:
        while True:
            await asyncio.sleep(renew_every(lease))
            try:
                if not await outbox.renew(claimed, lease=lease):
                    log.warning("watch note %s: its lease was taken over while it was being posted", claimed.note.id)
                    return
            except FolioError as error:  # Redis away a moment: two renewals may fail before the lease lapses
                log.warning("watch note %s: lease not renewed: %s", claimed.note.id, error)

    renewing = asyncio.create_task(renew(), name=f"watch note {claimed.note.id} lease")
    try:
        yield
    finally:
        renewing.cancel()


async def _remember(store: ConversationStore, note: Note, ts: str) -> None:
    """Deleting the conversation deletes the note too: its ts joins the record, under the thread's lock (a turn
    running there saves its own copy of the record); a thread busy past REMEMBER_WAIT keeps the note, logged."""
    try:
        async with store.lock(note.thread, wait_seconds=REMEMBER_WAIT):
            await store.remember_message(note.thread, ts)
    except ThreadBusy:
        log.warning("watch note %s (%s) posted in busy %s: not deleted with the conversation", note.id, ts, note.thread)


async def post_quietly(store: ConversationStore, slack: AsyncWebClient) -> None:
    """`post_notes`, logged; a Redis or Slack that cannot be reached now leaves the notes for the next run."""
    try:
        posted = await post_notes(store, slack)
    except NOT_POSTED as error:
        log.warning("watch notes not posted now: %s", error)
        return
    if posted:
        log.info("posted %d watch note(s) left waiting", posted)


def posting_every(
    store: ConversationStore, slack: AsyncWebClient, *, seconds: float
) -> AbstractAsyncContextManager[None]:
    """While the block runs (`folio serve`), post the notes left waiting every `seconds` (0: never). Every worker
    sweeps; a note is claimed by one of them (the outbox's lease). A sweep cut off on the way out leaves the note it
    had claimed to the next poster after its lease."""
    return every(seconds, lambda: post_quietly(store, slack), name="watch notes left waiting (timer)")


async def _post(slack: AsyncWebClient, note: Note) -> str:
    response = await slack.chat_postMessage(
        channel=note.channel,
        thread_ts=note.thread_ts,
        text=note.text,
        blocks=note_blocks(note),
        metadata={"event_type": NOTE_EVENT, "event_payload": {"note": note.id}},
    )
    return str(response["ts"])


async def _in_thread(slack: AsyncWebClient, note: Note) -> bool:
    """Whether the thread already holds this note (by its metadata)."""
    cursor: str | None = None
    for _ in range(_REPLIES_PAGES):
        response = await slack.conversations_replies(
            channel=note.channel, ts=note.thread_ts, cursor=cursor, include_all_metadata=True, limit=200
        )
        for message in response.get("messages") or []:
            if _names(message.get("metadata") or {}, note):
                return True
        following = (response.get("response_metadata") or {}).get("next_cursor")
        if not following or following == cursor:
            return False
        cursor = following
    return False


def _names(metadata: dict[str, Any], note: Note) -> bool:
    return metadata.get("event_type") == NOTE_EVENT and (metadata.get("event_payload") or {}).get("note") == note.id
