"""Feedback that closes the loop: a click on 👍 / 👎 is kept with the answer it judges (`bot.store.feedback`), and
a 👎 opens a short form asking what was wrong, whose answer is added to the same record.

    record_click(folio, client, thread, user, turn, rating)   after the ack: the vote, with the answer as shown
    reason_form(thread, turn)                                 the 👎 form (views.open), the answer named inside it
    form_answer(view)                                         (thread, turn, reason, comment) from its submission
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.models import Feedback
from bot.slack.failures import describe_failure
from bot.slack.services import SlackFolio
from bot.slack.thread_actions import tell
from bot.store import ThreadKey
from bot.store.feedback import REASONS, FeedbackStore, record_of

log = logging.getLogger(__name__)

FORM = "folio_feedback_reason"  # the form's callback_id
COMMENT_LIMIT = 1000


def feedback_store(folio: SlackFolio) -> FeedbackStore:
    """The feedback records, in the conversations' Redis and for their retention."""
    return folio.stores.feedback


async def record_click(
    folio: SlackFolio, client: AsyncWebClient, thread: ThreadKey, user: str, turn: int, rating: Feedback
) -> None:
    """Keep `user`'s vote on answer `turn`, with the question, answer, citations, scope and profile; a 👍 is
    thanked in the thread (a 👎 is answered by its form)."""
    try:
        async with folio.store.lock(thread):
            conversation = await folio.store.load(thread)
            if conversation is None or not 0 <= turn < len(conversation.turns):
                await tell(client, thread, user, messages.CONVERSATION_GONE)
                return
            await folio.store.set_feedback(thread, turn, rating)
            record = record_of(conversation, thread, turn, user=user, rating=rating, at=datetime.now(UTC))
            await feedback_store(folio).save(record)
    except Exception as error:  # every failure reaches the person who clicked
        await tell(client, thread, user, describe_failure(error))
        return
    if rating == "helpful":
        await tell(client, thread, user, messages.FEEDBACK_THANKS)


async def open_form(client: AsyncWebClient, trigger_id: str, thread: ThreadKey, user: str, turn: int) -> None:
    """Open the 👎 form; when Slack refuses, the vote is kept anyway and the person is told."""
    try:
        await client.views_open(trigger_id=trigger_id, view=reason_form(thread, turn))
    except Exception as error:
        log.warning("could not open the feedback form in %s: %r", thread, error)
        await tell(client, thread, user, describe_failure(error))


async def record_reason(folio: SlackFolio, client: AsyncWebClient, user: str, view: dict[str, Any]) -> None:
    """The form was sent: add its reason and text to the person's record of that answer."""
    thread, turn, reason, comment = form_answer(view)
    try:
        kept = await feedback_store(folio).explain(thread, turn, user, reason=reason, comment=comment)
    except Exception as error:
        await tell(client, thread, user, describe_failure(error))
        return
    await tell(client, thread, user, messages.FEEDBACK_THANKS if kept else messages.CONVERSATION_GONE)


def reason_form(thread: ThreadKey, turn: int) -> dict[str, Any]:
    """The 👎 form: why (one of REASONS) and, optionally, what else; which answer it is about rides along."""
    options = [_option(messages.FEEDBACK_REASONS[reason], reason) for reason in REASONS]
    metadata = json.dumps({"thread": [thread.team, thread.channel, thread.thread_ts], "turn": turn})
    return {
        "type": "modal",
        "callback_id": FORM,
        "private_metadata": metadata,
        "title": _plain(messages.FEEDBACK_FORM_TITLE),
        "submit": _plain(messages.FEEDBACK_FORM_SEND),
        "close": _plain(messages.FEEDBACK_FORM_CANCEL),
        "blocks": [
            {
                "type": "input",
                "block_id": "reason",
                "label": _plain(messages.FEEDBACK_FORM_REASON),
                "element": {"type": "radio_buttons", "action_id": "reason", "options": options},
            },
            {
                "type": "input",
                "block_id": "comment",
                "optional": True,
                "label": _plain(messages.FEEDBACK_FORM_COMMENT),
                "element": {
                    "type": "plain_text_input",
                    "action_id": "comment",
                    "multiline": True,
                    "max_length": COMMENT_LIMIT,
                },
            },
        ],
    }


def form_answer(view: dict[str, Any]) -> tuple[ThreadKey, int, str, str | None]:
    """(thread, turn, reason, comment) from a view_submission's view."""
    metadata = json.loads(view.get("private_metadata") or "{}")
    team, channel, thread_ts = metadata["thread"]
    values = (view.get("state") or {}).get("values") or {}
    chosen = ((values.get("reason") or {}).get("reason") or {}).get("selected_option") or {}
    reason = str(chosen["value"]) if chosen.get("value") in REASONS else "other"
    comment = ((values.get("comment") or {}).get("comment") or {}).get("value")
    text = comment.strip()[:COMMENT_LIMIT] if isinstance(comment, str) and comment.strip() else None
    return ThreadKey(team=team, channel=channel, thread_ts=thread_ts), int(metadata["turn"]), reason, text


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text}


def _option(text: str, value: str) -> dict[str, Any]:
    return {"text": _plain(text), "value": value}
