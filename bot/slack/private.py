""" "Search what only I can see": a person whose own access (the `access:` rules) reaches containers the channel's
rule does not is offered, after a channel answer and only to them (an ephemeral message), the same question answered
privately: in their DM with Folio, linking back to the thread, from the union of the channel's scope and theirs.

    offer(folio, client, request)           after a channel turn: the offer, when the asker's access is wider
    answer_privately(folio, client, click)  the button: checked (`entitled`), then a new DM thread, its one turn

The offer names nothing the channel cannot see; the answer never goes to the channel. The button's value names a
thread and a turn, and a value can be forged: every click is checked against who clicked (the asker of that turn
only, while they can read that channel, and only while their access still reaches further), never the value.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.access import Access
from bot.config import ChannelPolicy
from bot.errors import FolioError
from bot.models import Scope, Tag, is_direct_message
from bot.slack.door import start_turn
from bot.slack.failures import describe_failure
from bot.slack.render import render_private_offer
from bot.slack.services import SlackFolio
from bot.store import ThreadKey
from bot.turns import TurnRequest
from bot.turns.scope import TurnScope

log = logging.getLogger(__name__)


async def wider(
    folio: SlackFolio, team: str, channel: str, user: str, *, user_team: str | None = None
) -> tuple[str, ...]:
    """The containers `user` may read that the channel's rule does not search (empty: no offer)."""
    policy = folio.channel_policy()
    if policy.access is None or is_direct_message(channel):
        return ()
    try:
        rule = policy.rule_for(channel)
        if await folio.access.organisation.is_outsider(team, user, user_team=user_team):
            return ()
        grant = await folio.access.grant(policy, team=team, user=user)
    except FolioError:  # an offer is optional: no offer rather than a wrong one
        return ()
    return tuple(c for c in (grant.containers if grant else ()) if c != rule.container)


async def offer(folio: SlackFolio, client: AsyncWebClient, request: TurnRequest) -> None:
    """After a channel answer: the offer, shown only to its asker, when their access reaches further."""
    thread = request.thread
    if request.is_dm or not await wider(folio, thread.team, thread.channel, request.user, user_team=request.asker_team):
        return
    try:
        conversation = await folio.store.load(thread)
        if conversation is None or not conversation.turns:
            return
        value = json.dumps(
            {"thread": [thread.team, thread.channel, thread.thread_ts], "turn": len(conversation.turns) - 1}
        )
        message = render_private_offer(value)
        await client.chat_postEphemeral(
            channel=thread.channel,
            thread_ts=thread.thread_ts,
            user=request.user,
            text=message.text,
            blocks=message.block_dicts(),
        )
    except Exception:  # the answer is shown; a lost offer is no failure of the turn
        log.warning("could not offer a private answer in %s", thread, exc_info=True)


@dataclass(frozen=True)
class PrivateScope:
    """The union of the channel's scope and the asker's access (the channel's default tags kept, unless the person
    may read the channel's container whole)."""

    policy: Callable[[], ChannelPolicy]
    access: Access
    channel: str

    async def resolve(self, request: TurnRequest, *, narrowing: tuple[Tag, ...], strict: bool = False) -> TurnScope:
        policy = self.policy()
        rule = policy.rule_for(self.channel)
        grant = await self.access.grant(policy, team=request.thread.team, user=request.user)
        theirs = grant.containers if grant else ()
        tags = () if rule.container in theirs else rule.tags
        containers = tuple(dict.fromkeys((rule.container, *theirs)))
        return TurnScope(Scope(containers=containers, tags=tags), messages.BASIS_PRIVATE)


@dataclass(frozen=True, kw_only=True)
class Click:
    """One click on the offer's button: who clicked, in which workspace and channel (Slack's signed payload says),
    and the button's value (what the click claims: a thread and a turn; never trusted)."""

    user: str
    team: str
    channel: str
    value: str


def read_value(value: str) -> tuple[ThreadKey, int] | None:
    """The thread and turn a button value names, or None when it is not the offer's shape."""
    try:
        data = json.loads(value)
        team, channel, thread_ts = data["thread"]
        turn = data["turn"]
    except (ValueError, TypeError, KeyError):
        return None
    if not all(isinstance(part, str) and part for part in (team, channel, thread_ts)) or type(turn) is not int:
        return None
    return ThreadKey(team=team, channel=channel, thread_ts=thread_ts), turn


async def entitled(folio: SlackFolio, click: Click) -> tuple[ThreadKey, str] | str:
    """Checked on every click, whatever the value says: the thread asked in and its question, when the clicker is
    the asker of that turn, can still read that channel, and may still read more than it searches; otherwise the
    sentence to show them. Nothing is loaded from a channel the clicker cannot read."""
    named = read_value(click.value)
    if named is None or named[0].team != click.team:  # another workspace's thread: never theirs to name
        return messages.PRIVATE_REFUSED
    asked_in, turn = named
    if asked_in.channel[:1] not in {"C", "G"}:
        return messages.PRIVATE_REFUSED
    if not await folio.access.memberships.can_read(asked_in.team, asked_in.channel, click.user):
        return messages.PRIVATE_REFUSED
    conversation = await folio.store.load(asked_in)
    if conversation is None or not 0 <= turn < len(conversation.turns):
        return messages.CONVERSATION_GONE
    if conversation.turns[turn].asked_by != click.user:
        return messages.PRIVATE_REFUSED
    if not await wider(folio, asked_in.team, asked_in.channel, click.user):  # access narrowed since the offer
        return messages.PRIVATE_REFUSED
    return asked_in, conversation.turns[turn].question


async def answer_privately(folio: SlackFolio, client: AsyncWebClient, click: Click) -> None:
    """The button: the question of that answer, asked again in the person's DM, from the wider scope."""
    try:
        checked = await entitled(folio, click)
    except Exception as error:
        checked = describe_failure(error)
    if isinstance(checked, str):
        log.warning("private answer refused to %s for %.200r", click.user, click.value)
        await _refuse(client, click, checked)
        return
    asked_in, question = checked
    try:
        dm = (await client.conversations_open(users=click.user))["channel"]["id"]
        link = (await client.chat_getPermalink(channel=asked_in.channel, message_ts=asked_in.thread_ts))["permalink"]
        root = await client.chat_postMessage(channel=dm, text=messages.private_root(link, question))
    except Exception as error:
        await _refuse(client, click, describe_failure(error))
        return
    # root_is_ours: Folio's first DM message quotes the question; deleting the conversation deletes it too. Through
    # the one door, like every turn: durable, governed (budget, usage), traced; its scope: PrivateScope
    request = TurnRequest(
        thread=ThreadKey(team=asked_in.team, channel=dm, thread_ts=str(root["ts"])),
        question=question,
        user=click.user,
        is_dm=True,
        root_is_ours=True,
        private_from=asked_in.channel,
    )
    await start_turn(folio, client, request)


async def _refuse(client: AsyncWebClient, click: Click, text: str) -> None:
    """Say it where the person clicked (a channel they are in), never in the channel the value names."""
    try:
        await client.chat_postEphemeral(channel=click.channel, user=click.user, text=text)
    except Exception:  # Slack failing too: there is nowhere else to say it
        log.exception("could not tell %s in %s: %s", click.user, click.channel, text)
