"""`/ask [key:value ...] [--thorough] question`: restate the question publicly, then answer in its thread.

    listener (before the ack)   the syntax: filters whose key is a tag key, `--thorough`, `help`, `access`
    the turn's first step       `open_turn`: the question's length, the scope with those filters, the refusals, once;
                                a refusal is said to the asker alone (ephemeral) and nothing is posted
    the restatement             "<@U> asked: ..." with the scope just resolved, then the turn in its thread, through
                                the one door, searching that very scope (`TurnRequest.opened`)

`/ask help` shows the syntax and what is searched here; `/ask access` what this channel and the person's DMs search.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.config import ChannelPolicy
from bot.errors import AccessUnavailable, FolioError, InvalidInput, NotConnected
from bot.models import Scope, is_direct_message
from bot.slack.commands import AskCommand, parse_ask
from bot.slack.door import start_turn
from bot.slack.failures import describe_failure
from bot.slack.outsiders import Outsider, allows_outsiders, stranger
from bot.slack.render import escape, render_question
from bot.slack.services import SlackFolio
from bot.slack.turns import services
from bot.store import ThreadKey
from bot.turns import TurnRequest, TurnScope
from bot.turns.scope import scope_for_turn
from bot.turns.turn import open_turn

log = logging.getLogger(__name__)

ACCESS_WORD = "access"  # `/ask access`, that single word: what the person may search
UNPOSTED = "-"  # the thread of an `/ask` before its restatement is posted (its scope reads the team and channel only)


@dataclass(frozen=True, kw_only=True)
class Asked:
    """One `/ask` question as the command gave it: who asked, where, and what they typed (parsed)."""

    team: str
    channel: str
    user: str
    command: AskCommand

    def request(self, *, thread_ts: str, opened: TurnScope | None = None) -> TurnRequest:
        """The turn's request in the thread `thread_ts` (UNPOSTED: before the restatement exists)."""
        return TurnRequest(
            thread=ThreadKey(team=self.team, channel=self.channel, thread_ts=thread_ts),
            question=self.command.question,
            user=self.user,
            is_dm=is_direct_message(self.channel),
            tags=self.command.tags,
            profile="thorough" if self.command.thorough else None,
            root_is_ours=True,
            opened=opened,
        )


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.command("/ask")
    async def on_ask(
        ack: AsyncAck, command: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient, respond: AsyncRespond
    ) -> None:
        channel, user = command["channel_id"], command["user_id"]
        is_dm = is_direct_message(channel)
        team = context.team_id or command.get("team_id") or "-"
        if (command.get("text") or "").strip().lower() == ACCESS_WORD:
            await ack()
            folio.tasks.spawn(
                _tell(respond, access_text(folio, team=team, channel=channel, user=user, is_dm=is_dm)),
                name=f"access {user}",
            )
            return
        try:  # the syntax only: what the question may search is the turn's to decide (`open_turn`), once
            parsed = parse_ask(command.get("text") or "", tag_keys=folio.channel_policy().tag_keys)
        except InvalidInput as error:  # said only to the asker: nothing was posted
            await ack(response_type="ephemeral", text=str(error))
            return
        await ack()
        if parsed.wants_help:  # after the ack: whether the person is of another organisation may ask Slack
            folio.tasks.spawn(
                _tell(respond, _help(folio, team=team, channel=channel, user=user, is_dm=is_dm)), name="help"
            )
            return
        asked = Asked(team=team, channel=channel, user=user, command=parsed)
        folio.tasks.spawn(_ask_in_channel(folio, client, respond, asked), name=f"ask {channel}")


def help_text(policy: ChannelPolicy, channel: str, *, is_dm: bool) -> str:
    """`/ask help`: the syntax, and the container and filters of this channel."""
    try:
        rule = policy.rule_for(channel, is_dm=is_dm)
    except NotConnected:
        return messages.ask_help(list(policy.tag_keys), [], None)
    return messages.ask_help(list(policy.tag_keys), [str(tag) for tag in rule.tags], rule.container)


async def _help(folio: SlackFolio, *, team: str, channel: str, user: str, is_dm: bool) -> str:
    """`/ask help`: the syntax, and what is searched here; to a person of another organisation, only what they
    may search (a channel whose rule allows them, their own DM scope), else the refusal."""
    policy = folio.channel_policy()
    outsider = await stranger(folio, team=team, user=user)
    if outsider is not None and (is_dm or not allows_outsiders(folio, channel)):
        if not is_dm or outsider.dm_scope is None:
            return messages.OUTSIDER_REFUSED
        return messages.ask_help(list(policy.tag_keys), [], escape(", ".join(outsider.dm_scope.containers)))
    if is_dm:
        return await _dm_help(folio, team=team, channel=channel, user=user)
    return help_text(policy, channel, is_dm=False)


async def access_text(folio: SlackFolio, *, team: str, channel: str, user: str, is_dm: bool) -> str:
    """`/ask access`: what this channel searches (in a channel), and what the person may search in a DM."""
    policy = folio.channel_policy()
    outsider = await stranger(folio, team=team, user=user)
    if outsider is not None:
        return _outsider_access(folio, outsider, channel=channel, is_dm=is_dm)
    lines = [] if is_dm else [_channel_line(policy, channel)]
    if policy.access is not None:
        try:
            grant = await folio.access.grant(policy, team=team, user=user)
        except AccessUnavailable as error:  # the channel's line above needs no Slack lookup: keep it
            return "\n".join([*lines, str(error)])
        assert grant is not None
        lines += messages.access_lines([escape(c) for c in grant.containers], [escape(m) for m in grant.matched])
    elif policy.dm is not None:
        lines += messages.access_lines([escape(policy.dm.container)], ["dm"])
    else:
        lines.append(messages.DM_NOT_CONNECTED)
    return "\n".join(lines)


def _outsider_access(folio: SlackFolio, outsider: Outsider, *, channel: str, is_dm: bool) -> str:
    """`/ask access` for a person of another organisation: a channel's line only where its rule allows them, and
    the containers named for them; nothing else of the policy."""
    lines = [] if is_dm or not allows_outsiders(folio, channel) else [_channel_line(folio.channel_policy(), channel)]
    if outsider.dm_scope is None:
        return "\n".join([*lines, messages.OUTSIDER_REFUSED])
    return "\n".join(
        [*lines, *messages.access_lines([escape(c) for c in outsider.dm_scope.containers], [messages.BASIS_NAMED])]
    )


def _channel_line(policy: ChannelPolicy, channel: str) -> str:
    try:
        rule = policy.rule_for(channel)
    except NotConnected:
        return messages.channel_access_line(channel, None, [])
    return messages.channel_access_line(channel, escape(rule.container), [escape(str(tag)) for tag in rule.tags])


async def _dm_help(folio: SlackFolio, *, team: str, channel: str, user: str) -> str:
    """`/ask help` in a DM where the asker's access decides: the syntax and the person's containers."""
    policy = folio.channel_policy()
    try:
        scope = await _asker_scope(folio, team=team, channel=channel, user=user)
    except NotConnected:
        return messages.ask_help(list(policy.tag_keys), [], None)
    tags, containers = [str(tag) for tag in scope.tags], escape(", ".join(scope.containers))
    return messages.ask_help(list(policy.tag_keys), tags, containers)


async def _asker_scope(folio: SlackFolio, *, team: str, channel: str, user: str) -> Scope:
    """What `/ask help` names in a DM: the scope a new DM thread of `user` would search (a person of this
    organisation: `_help` answered the others)."""
    thread = ThreadKey(team=team, channel=channel, thread_ts=UNPOSTED)
    chosen = await scope_for_turn(
        folio.channel_policy(), folio.access, thread=thread, user=user, is_dm=True, narrowing=()
    )
    return chosen.scope


async def _tell(respond: AsyncRespond, text: Awaitable[str]) -> None:
    """Answer only the person who typed the command, failures included."""
    try:
        said = await text
    except FolioError as error:
        said = str(error)
    try:
        await respond(response_type="ephemeral", text=said)
    except Exception:
        log.exception("could not answer a command ephemerally")


async def _ask_in_channel(folio: SlackFolio, client: AsyncWebClient, respond: AsyncRespond, asked: Asked) -> None:
    """The `/ask` turn: its first step (`open_turn`: the length, the scope with its filters, the refusals), then the
    question restated publicly with that scope, then the turn taken on in that message's thread with the same scope.
    A refusal or failure before the restatement is said to the asker alone: nothing is posted for everyone."""
    unposted = asked.request(thread_ts=UNPOSTED)
    try:
        opened = await open_turn(unposted, services=services(folio, unposted))
        message = render_question(
            asked.command.question, user=asked.user, scope=opened.scope, thorough=asked.command.thorough
        )
        await folio.store.ping()  # a question Folio cannot take on is not posted for everyone to see
        posted = await client.chat_postMessage(
            channel=asked.channel,
            text=message.text,
            blocks=message.block_dicts(),
            unfurl_links=False,
            unfurl_media=False,
        )
    except (FolioError, SlackApiError) as error:  # no thread exists yet: answer through the response_url
        try:
            await respond(response_type="ephemeral", text=describe_failure(error))
        except Exception:
            log.exception("could not tell %s that /ask failed", asked.user)
        return
    await start_turn(folio, client, asked.request(thread_ts=str(posted["ts"]), opened=opened))
