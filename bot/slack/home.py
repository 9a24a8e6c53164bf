"""Folio's Home tab, published for each person with `views.publish` (their user_id): Slack shows it to that person
only, so it is where an admin's "Why this answer?" lives, out of the messages everyone sees.

Everyone's tab says how to ask Folio. An admin's also holds "Why this answer?": a button asking for an answer's
link, and the latest answers in the workspace's channels (newest first), each with a "Why?" button and its question
where the admin can read that conversation in Slack (bot.slack.why.for_reader). It is published
again each time the person opens it, so an admin removed from `admins:` (or from the user group named there) finds
the entry gone the next time; until then, each click checks again (bot.slack.listeners.why).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.slack.render import escape
from bot.slack.services import SlackFolio
from bot.slack.why import NOT_A_READER, UNKNOWN, Shown, for_reader, is_admin
from bot.store import ThreadKey
from bot.turns.trace import Trace

log = logging.getLogger(__name__)

RECENT_SHOWN = 10
QUESTION_CHARS = 150  # a line of the list, not the whole question
ACTION_WHY_LINK = "folio_why_link"  # the Home tab's "Why this answer?" button: asks for an answer's link
ACTION_WHY_THREAD = "folio_why_thread"  # "Why?" beside one of the latest answers; value {"channel", "thread_ts"}
_HIDDEN = {NOT_A_READER: messages.HOME_QUESTION_HIDDEN, UNKNOWN: messages.HOME_QUESTION_UNKNOWN}


@dataclass(frozen=True)
class Listed:
    """One of the latest answers: its thread and the trace of its latest turn, as the admin may see it."""

    thread: ThreadKey
    shown: Shown


async def publish(folio: SlackFolio, client: AsyncWebClient, *, team: str, user: str) -> None:
    """Publish `user`'s Home tab as they may see it now; a failure is logged (Slack keeps the last one shown)."""
    try:
        view = home_view(admin=False)
        if await _admin(folio, team=team, user=user):
            view = home_view(admin=True, listed=await latest(folio, team, user))
        await client.views_publish(user_id=user, view=view)
    except Exception:
        log.warning("could not publish the Home tab of %s", user, exc_info=True)


async def latest(folio: SlackFolio, team: str, user: str) -> list[Listed] | None:
    """The workspace's latest answers in channels, newest first, as `user` may see them; None when traces are off."""
    traces = folio.ledger.traces
    if traces is None:
        return None
    recent = await traces.recent(team, count=RECENT_SHOWN)
    shown = await for_reader(folio, team=team, user=user, traces=[Trace.from_json(text) for _, text in recent])
    return [Listed(thread, each) for (thread, _), each in zip(recent, shown, strict=True)]


def home_view(*, admin: bool, listed: Sequence[Listed] | None = ()) -> dict[str, Any]:
    """The Home tab: how to ask Folio and, for an admin, "Why this answer?" and the `listed` answers (None: traces
    are off). Anyone else's holds no trace of the entry."""
    blocks = [_section(messages.HOME_HOW_TO)]
    if admin:
        blocks += [{"type": "divider"}, _section(messages.HOME_WHY)]
        if listed is None:
            blocks.append(_section(messages.HOME_TRACES_OFF))
        else:
            button = _button(messages.BUTTON_WHY_LINK, ACTION_WHY_LINK, "link")
            blocks += [
                {"type": "actions", "block_id": "why_link", "elements": [button]},
                _section(messages.HOME_RECENT),
            ]
            blocks += [_entry(index, each) for index, each in enumerate(listed)] or [_section(messages.HOME_NO_RECENT)]
    return {"type": "home", "blocks": blocks}


def thread_clicked(value: str, team: str) -> ThreadKey | None:
    """The thread a "Why?" button names (in the clicker's workspace, whatever the payload says), or None."""
    try:
        named = json.loads(value)
        return ThreadKey(team=team, channel=str(named["channel"]), thread_ts=str(named["thread_ts"]))
    except (ValueError, KeyError, TypeError):
        return None


def _entry(index: int, listed: Listed) -> dict[str, Any]:
    trace = listed.shown.trace
    line = f"<#{listed.thread.channel}> · <@{trace.user}> · {_when(trace.at)} · {trace.outcome}"
    if listed.shown.hidden:
        line += "\n" + _HIDDEN[listed.shown.hidden]
    elif trace.question:
        question = " ".join(trace.question.split())
        question = question if len(question) <= QUESTION_CHARS else question[: QUESTION_CHARS - 1].rstrip() + "…"
        line += f"\n> {escape(question)}"
    value = json.dumps({"channel": listed.thread.channel, "thread_ts": listed.thread.thread_ts})
    return {
        **_section(line),
        "block_id": f"why_{index}",
        "accessory": _button(messages.BUTTON_WHY, ACTION_WHY_THREAD, value),
    }


def _when(at: str) -> str:
    """A trace's time, shown in the reader's time zone (Slack's date formatting), with the UTC text as fallback."""
    try:
        epoch = int(datetime.fromisoformat(at).timestamp())
    except ValueError:
        return escape(at)
    return f"<!date^{epoch}^{{date_short_pretty}} {{time}}|{escape(at)}>"


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _button(text: str, action_id: str, value: str) -> dict[str, Any]:
    return {"type": "button", "text": {"type": "plain_text", "text": text}, "action_id": action_id, "value": value}


async def _admin(folio: SlackFolio, *, team: str, user: str) -> bool:
    """Whether the tab shows the entry: an admin check that fails (Slack's user groups unreachable) shows none."""
    try:
        return await is_admin(folio, team=team, user=user)
    except Exception:
        log.warning("could not tell whether %s is an admin; their Home tab shows no traces", user, exc_info=True)
        return False
