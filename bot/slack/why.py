""" "Why this answer?", for Folio's admins only: who is one, the traces of a thread, and the modals that show them.

Slack shows a message alike to everyone in the channel, so no answer carries the entry: an admin reaches it from
their own Home tab (bot.slack.home), which Slack shows to that person only. Every click and every submission checks
again (a payload anyone could forge says nothing about who may see a trace): the person must be listed in `admins:`
in channels.yaml, by user ID or through a user group, today. Traces are looked up in the workspace the request
came from only.

The old menu reached only people who could see the answer; the Home tab reaches every channel's. So a trace's
question and answer are shown to an admin only where they can read that conversation in Slack (a public channel of
the workspace, or one they are a member of: `Memberships.can_read`, cached); elsewhere, and whenever Slack cannot
say, they are hidden and the modal says why (`for_reader`). The searches, sources, scores, removed citations, tokens
and timings are governance data and always shown.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.config.channels import is_user_id
from bot.errors import AccessUnavailable
from bot.slack.failures import describe_failure
from bot.slack.render import escape, split_mrkdwn
from bot.slack.services import SlackFolio
from bot.store import ThreadKey
from bot.turns.trace import ANSWERED, Trace, thread_in

log = logging.getLogger(__name__)

MODAL_BLOCKS = 100
VIEW_WHY_LINK = "folio_why_link_form"  # the modal asking for an answer's link
LINK_BLOCK, LINK_INPUT = "why_link", "link"


@dataclass(frozen=True)
class Shown:
    """A trace as one admin may see it: `hidden` says why its question and answer were taken out (None: kept)."""

    trace: Trace
    hidden: str | None = None  # NOT_A_READER or UNKNOWN


NOT_A_READER, UNKNOWN = "not_a_reader", "unknown"  # the admin cannot read the conversation; Slack could not say


async def is_admin(folio: SlackFolio, *, team: str, user: str) -> bool:
    """Whether `user` is one of Folio's admins: listed in `admins:` (by ID, or through one of the user groups listed
    there), who read traces. Not Slack's workspace admins (who may delete anyone's conversation: thread_actions)."""
    admins = folio.channel_policy().admins
    if user in admins:
        return True
    groups = [key for key in admins if not is_user_id(key)]
    return bool(groups) and bool(await folio.access.memberships.groups_of(team, user, groups))


async def for_reader(folio: SlackFolio, *, team: str, user: str, traces: Sequence[Trace]) -> list[Shown]:
    """`traces` as `user` may see them: the words of each only where they can read its conversation in Slack (one
    lookup per conversation, and none for a trace without words, such as a DM's)."""
    channels = sorted({trace.channel for trace in traces if trace.has_words()})
    hidden = dict(zip(channels, await asyncio.gather(*(_hidden(folio, team, c, user) for c in channels)), strict=True))
    return [
        Shown(trace.without_words(), why) if (why := hidden.get(trace.channel)) else Shown(trace) for trace in traces
    ]


async def _hidden(folio: SlackFolio, team: str, channel: str, user: str) -> str | None:
    """Why `user` may not read `channel`'s words here, or None when they may; never a guess in their favour."""
    try:
        return None if await folio.access.memberships.can_read(team, channel, user) else NOT_A_READER
    except AccessUnavailable:
        log.warning("could not tell whether %s can read %s: its question and answer are hidden", user, channel)
        return UNKNOWN


async def traces_of(folio: SlackFolio, thread: ThreadKey) -> list[Trace]:
    """Every kept trace of the thread, oldest turn first (none when traces are off)."""
    traces = folio.ledger.traces
    return [] if traces is None else [Trace.from_json(text) for text in await traces.all(thread)]


async def trace_of(folio: SlackFolio, thread: ThreadKey, turn: int) -> Trace | None:
    """The trace of the thread's `turn` (the nth turn that added an answer), or None when none is kept."""
    answered = [trace for trace in await traces_of(folio, thread) if trace.outcome in ANSWERED]
    return answered[turn] if 0 <= turn < len(answered) else None


async def traces_at(folio: SlackFolio, *, team: str, text: str) -> list[Trace] | None:
    """The traces of the thread an answer's link (or a thread ts) names, in `team` only; None when `text` is
    neither (the rule `folio trace` reads its argument by)."""
    found = thread_in(text)
    if found is None:
        return None
    channel, thread_ts = found
    if channel is not None:
        return await traces_of(folio, ThreadKey(team=team, channel=channel, thread_ts=thread_ts))
    traces = folio.ledger.traces
    return [] if traces is None else [Trace.from_json(t) for t in await traces.find(thread_ts=thread_ts, team=team)]


async def link_answer(folio: SlackFolio, *, team: str, user: str, text: str) -> dict[str, Any]:
    """What the link modal's submission is answered (Slack's `response_action`): the trace in its place, the
    refusal for anyone but an admin, or an error under the field (not a link; no trace here)."""
    try:
        if not await is_admin(folio, team=team, user=user):
            log.warning("a non-admin (%s) asked for the trace of %r: refused", user, text[:100])
            return {"response_action": "update", "view": notice(messages.WHY_ADMINS_ONLY)}
        traces = await traces_at(folio, team=team, text=text)
        shown = await for_reader(folio, team=team, user=user, traces=traces or [])
    except Exception as error:
        log.warning("could not show the trace of %r", text[:100], exc_info=True)
        return {"response_action": "errors", "errors": {LINK_BLOCK: describe_failure(error)}}
    if traces is None:
        return {"response_action": "errors", "errors": {LINK_BLOCK: messages.WHY_NOT_A_LINK}}
    if not traces:
        return {"response_action": "errors", "errors": {LINK_BLOCK: messages.WHY_NO_TRACE_HERE}}
    return {"response_action": "update", "view": modal(shown, numbered=True)}


async def open_modal(client: AsyncWebClient, trigger_id: str, view: dict[str, Any]) -> None:
    """Open `view`; a failure is logged (the trigger is good for 3 seconds, and there is no thread to tell)."""
    try:
        await client.views_open(trigger_id=trigger_id, view=view)
    except Exception:
        log.warning("could not open a modal", exc_info=True)


def modal(traces: Sequence[Shown], *, numbered: bool = False) -> dict[str, Any]:
    """Traces as a modal view: each turn's lines in sections of at most 3000 characters, after why its words are
    hidden if they are; the latest turns that fit Slack's 100 blocks (`numbered`: each under its turn's number)."""
    turns = []
    for number, shown in enumerate(traces, 1):
        head = [messages.WHY_TURN.format(number=number)] if numbered else []
        head += [_HIDDEN[shown.hidden]] if shown.hidden else []
        turns.append(split_mrkdwn("\n".join([*head, *map(escape, shown.trace.lines())])))
    texts: list[str] = []
    for each in reversed(turns):
        if texts and len(texts) + len(each) > MODAL_BLOCKS:
            break
        texts = each + texts
    return _modal([{"type": "section", "text": {"type": "mrkdwn", "text": text}} for text in texts[:MODAL_BLOCKS]])


def notice(text: str) -> dict[str, Any]:
    """A modal saying one thing (a refusal, a failure, no trace)."""
    return _modal([{"type": "section", "text": {"type": "mrkdwn", "text": text}}])


def link_modal() -> dict[str, Any]:
    """The modal asking an admin for an answer's link (or its thread's ts)."""
    field = {
        "type": "plain_text_input",
        "action_id": LINK_INPUT,
        "placeholder": {"type": "plain_text", "text": messages.WHY_LINK_PLACEHOLDER},
    }
    block = {
        "type": "input",
        "block_id": LINK_BLOCK,
        "element": field,
        "label": {"type": "plain_text", "text": messages.WHY_LINK_LABEL},
        "hint": {"type": "plain_text", "text": messages.WHY_LINK_HINT},
    }
    return {
        **_modal([block]),
        "callback_id": VIEW_WHY_LINK,
        "submit": {"type": "plain_text", "text": messages.WHY_LINK_SUBMIT},
    }


def link_text(view: dict[str, Any]) -> str:
    """What an admin typed into the link modal (Slack's `state.values`)."""
    value = ((view.get("state") or {}).get("values") or {}).get(LINK_BLOCK, {}).get(LINK_INPUT, {}).get("value")
    return str(value or "")


_HIDDEN = {NOT_A_READER: messages.WHY_WORDS_HIDDEN, UNKNOWN: messages.WHY_WORDS_UNKNOWN}


def _modal(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": messages.WHY_TITLE},
        "close": {"type": "plain_text", "text": messages.CLOSE},
        "blocks": blocks,
    }
