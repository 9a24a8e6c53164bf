"""Folio's Home tab, published for each person with `views.publish` (their user_id): Slack shows it to that person
only, so it is where an admin's "Why this answer?" lives, out of the messages everyone sees.

Everyone's tab says how to ask Folio. An admin's also holds "Why this answer?": a button asking for an answer's
link, and the latest answers in the workspace's channels (newest first), each with a "Why?" button and its question
where the admin can read that conversation in Slack (bot.slack.why.for_reader); and the documents people flagged as
outdated in this workspace, most flagged first, with links to their threads (the rule of `folio feedback
--outdated`, bot.evaluation.outdated). It is published again each time the person opens it, so an admin removed from
`admins:` (or from the user group named there) finds the entry gone the next time; until then, each click checks
again (bot.slack.listeners.why).

What people wrote becomes text, never markup: names are escaped and the flagged sections are `verbatim` (Slack turns
no URL or #name in them into a link); a thread is linked only when its channel and ts have Slack's shapes, and threads
in direct messages are counted, not linked. Ten documents of at most five links each keep the tab far from Slack's
100 blocks and 3,000 characters a section.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from slack_sdk.errors import SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.errors import FolioError
from bot.evaluation.outdated import Flagged, outdated_documents
from bot.models import is_direct_message
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
FLAGGED_SHOWN = 10  # documents flagged as outdated, most flagged first
THREADS_SHOWN = 5  # thread links per flagged document; the others are counted
NAME_CHARS = 200  # of a flagged document's name (escaped, at most 5 times as long)
_CONVERSATION = re.compile(r"[CGD][A-Z0-9]{2,20}")  # a channel or DM id Slack would name; DMs are counted, not linked
_THREAD_TS = re.compile(r"\d{9,11}\.\d{6}")


@dataclass(frozen=True)
class FlaggedList:
    """The documents flagged as outdated as an admin's tab lists them; `workspace_url` (auth.test's) makes the
    thread links, None: the threads are named, not linked."""

    documents: tuple[Flagged, ...]
    workspace_url: str | None


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
            listed, flagged = await latest(folio, team, user), await flagged_in(folio, client, team)
            view = home_view(admin=True, listed=listed, flagged=flagged)
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


async def flagged_in(folio: SlackFolio, client: AsyncWebClient, team: str) -> FlaggedList | None:
    """The documents flagged as outdated in `team`'s threads, most flagged first (the first FLAGGED_SHOWN); None
    when the feedback cannot be read now (the tab says so)."""
    try:
        records = [record for record in await folio.stores.feedback.since() if record.team == team]
    except FolioError:
        log.warning("the flagged documents could not be read for the Home tab", exc_info=True)
        return None
    documents = tuple(outdated_documents(records)[:FLAGGED_SHOWN])
    return FlaggedList(documents, await _workspace_url(client) if documents else None)


async def _workspace_url(client: AsyncWebClient) -> str | None:
    """The workspace's address (`https://acme.slack.com/`), which its permalinks start with; None when unknown."""
    try:
        url = (await client.auth_test()).get("url")
    except SlackClientError:
        return None
    return url if isinstance(url, str) and re.fullmatch(r"https://[a-z0-9.-]+/", url) else None


def home_view(
    *, admin: bool, listed: Sequence[Listed] | None = (), flagged: FlaggedList | None = FlaggedList((), None)
) -> dict[str, Any]:
    """The Home tab: how to ask Folio and, for an admin, "Why this answer?" and the `listed` answers (None: traces
    are off), and the `flagged` documents (None: not readable now). Anyone else's holds no trace of either."""
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
        blocks += _flagged_blocks(flagged)
    return {"type": "home", "blocks": blocks}


def _flagged_blocks(flagged: FlaggedList | None) -> list[dict[str, Any]]:
    blocks = [{"type": "divider"}, _section(messages.HOME_FLAGGED)]
    if flagged is None:
        return [*blocks, _section(messages.HOME_FLAGGED_UNKNOWN)]
    entries = [_flagged_entry(item, flagged.workspace_url) for item in flagged.documents]
    return [*blocks, *(entries or [_section(messages.HOME_NO_FLAGGED)])]


def _flagged_entry(item: Flagged, workspace_url: str | None) -> dict[str, Any]:
    """One flagged document: what people named (escaped, cut) as text, its threads as links Folio makes."""
    name = f"{item.container}/{item.file}"
    name = escape(name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…")
    pages = f" (page{'s' * (len(item.pages) > 1)} {', '.join(map(str, item.pages))})" if item.pages else ""
    threads = [found for found in map(_thread_of, item.threads) if found is not None]
    in_channels = [(channel, ts) for channel, ts in threads if not is_direct_message(channel)]
    links = [_thread_link(channel, ts, workspace_url) for channel, ts in in_channels[:THREADS_SHOWN]]
    text = messages.home_flagged(
        item.times,
        name,
        pages,
        _when(item.last),
        links,
        more=len(in_channels) - len(links),
        dms=len(threads) - len(in_channels),
    )
    return {"type": "section", "text": {"type": "mrkdwn", "text": text, "verbatim": True}}


def _thread_of(thread: str) -> tuple[str, str] | None:
    """`channel:thread_ts` as the feedback records name a thread, when both have Slack's shapes (or a DM's)."""
    channel, _, ts = thread.partition(":")
    return (channel, ts) if _CONVERSATION.fullmatch(channel) and _THREAD_TS.fullmatch(ts) else None


def _thread_link(channel: str, ts: str, workspace_url: str | None) -> str:
    """`#channel` and the thread's start, linked to the thread when the workspace's address is known."""
    when = datetime.fromtimestamp(float(ts), UTC).strftime("%-d %b %H:%M")
    if workspace_url is None:
        return f"<#{channel}> {when}"
    return f"<#{channel}> <{workspace_url}archives/{channel}/p{ts.replace('.', '')}|{when}>"


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
