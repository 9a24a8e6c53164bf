""" "Search what only I can see": a person whose own access (the `access:` rules) reaches containers the channel's
rule does not is offered, after a channel answer and only to them (an ephemeral message), the same question answered
privately: in their DM with Folio, linking back to the thread, from the union of the channel's scope and theirs.

    offer(folio, client, request)           after a channel turn: the offer, when the asker's access is wider
    answer_privately(folio, client, user, value)   the button: a new DM thread, its turn through the one door

The offer names nothing the channel cannot see; the answer never goes to the channel.
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
from bot.slack.thread_actions import tell
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
        value = json.dumps({"thread": [thread.team, thread.channel, thread.thread_ts],
                            "turn": len(conversation.turns) - 1})  # fmt: skip
        message = render_private_offer(value)
        await client.chat_postEphemeral(channel=thread.channel, thread_ts=thread.thread_ts, user=request.user,
                                        text=message.text, blocks=message.block_dicts())  # fmt: skip
    except Exception:  # the answer is shown; a lost offer is no failure of the turn
        log.warning("could not offer a private answer in %s", thread, exc_info=True)


@dataclass(frozen=True)
class PrivateScope:
    """The union of the channel's scope and the asker's access (the channel's default tags kept, unless the person
    may read the channel's container whole)."""

    policy: Callable[[], ChannelPolicy]
    access: Access
    channel: str

    async def resolve(self, request: TurnRequest, *, narrowing: tuple[Tag, ...]) -> TurnScope:
        policy = self.policy()
        rule = policy.rule_for(self.channel)
        grant = await self.access.grant(policy, team=request.thread.team, user=request.user)
        theirs = grant.containers if grant else ()
        tags = () if rule.container in theirs else rule.tags
        containers = tuple(dict.fromkeys((rule.container, *theirs)))
        return TurnScope(Scope(containers=containers, tags=tags), messages.BASIS_PRIVATE)


async def answer_privately(folio: SlackFolio, client: AsyncWebClient, user: str, value: str) -> None:
    """The button: the question of that answer, asked again in the person's DM, from the wider scope."""
    data = json.loads(value)
    team, channel, thread_ts = data["thread"]
    asked_in = ThreadKey(team=team, channel=channel, thread_ts=thread_ts)
    try:
        conversation = await folio.store.load(asked_in)
        turn = int(data["turn"])
        gone = conversation is None or not 0 <= turn < len(conversation.turns)
        if gone or not await wider(folio, team, channel, user):  # access narrowed since the offer: no answer
            await tell(client, asked_in, user, messages.CONVERSATION_GONE)
            return
        assert conversation is not None
        question = conversation.turns[turn].question
        dm = (await client.conversations_open(users=user))["channel"]["id"]
        link = (await client.chat_getPermalink(channel=channel, message_ts=thread_ts))["permalink"]
        root = await client.chat_postMessage(channel=dm, text=messages.private_root(link, question))
    except Exception as error:
        await tell(client, asked_in, user, describe_failure(error))
        return
    # through the one door, like every turn: durable, governed (budget, usage), traced; its scope: PrivateScope
    request = TurnRequest(thread=ThreadKey(team=team, channel=dm, thread_ts=str(root["ts"])), question=question,
                          user=user, is_dm=True, private_from=channel)  # fmt: skip
    await start_turn(folio, client, request)
