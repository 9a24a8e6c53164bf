"""`/ask [key:value ...] [--thorough] question`: restate the question publicly, then answer in its thread.

`/ask help` shows the syntax and what is searched here; `/ask access` what this channel and the person's DMs search.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.config import ChannelPolicy, narrow
from bot.errors import AccessUnavailable, FolioError, InvalidInput, NotConnected, Refused
from bot.models import Scope, Tag, is_direct_message
from bot.slack.commands import AskCommand, parse_ask
from bot.slack.door import start_turn
from bot.slack.failures import describe_failure
from bot.slack.outsiders import Outsider, allows_outsiders, channel_refusal, stranger
from bot.slack.render import escape, render_question
from bot.slack.services import SlackFolio
from bot.store import ThreadKey
from bot.turns import TurnRequest
from bot.turns.scope import new_thread_scope, scope_for_turn

log = logging.getLogger(__name__)

ACCESS_WORD = "access"  # `/ask access`, that single word: what the person may search


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.command("/ask")
    async def on_ask(
        ack: AsyncAck, command: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient, respond: AsyncRespond
    ) -> None:
        channel, user = command["channel_id"], command["user_id"]
        is_dm = is_direct_message(channel)
        team = context.team_id or command.get("team_id") or "-"
        policy = folio.channel_policy()
        by_asker = is_dm  # the asker's access decides: look it up after the ack
        if (command.get("text") or "").strip().lower() == ACCESS_WORD:
            await ack()
            folio.tasks.spawn(
                _tell(respond, access_text(folio, team=team, channel=channel, user=user, is_dm=is_dm)),
                name=f"access {user}",
            )
            return
        try:
            parsed = parse_ask(command.get("text") or "", tag_keys=policy.tag_keys)
            if parsed.wants_help:  # after the ack: whether the person is of another organisation may ask Slack
                await ack()
                folio.tasks.spawn(
                    _tell(respond, _help(folio, team=team, channel=channel, user=user, is_dm=is_dm)), name="help"
                )
                return
            if len(parsed.question) > folio.options.max_question_chars:  # refused before it is restated publicly
                limit = folio.options.max_question_chars
                raise InvalidInput(messages.question_too_long(len(parsed.question), limit=limit))
            scope = None if by_asker else new_thread_scope(policy, channel=channel, is_dm=is_dm, tags=parsed.tags)
        except (InvalidInput, NotConnected) as error:  # said only to the asker: nothing was posted yet
            await ack(response_type="ephemeral", text=str(error))
            return
        await ack()
        folio.tasks.spawn(
            _ask_in_channel(folio, client, respond, parsed, scope, team=team, channel=channel, user=user, is_dm=is_dm),
            name=f"ask {channel}",
        )


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
        scope = await _asker_scope(folio, team=team, channel=channel, user=user, tags=())
    except NotConnected:
        return messages.ask_help(list(policy.tag_keys), [], None)
    tags, containers = [str(tag) for tag in scope.tags], escape(", ".join(scope.containers))
    return messages.ask_help(list(policy.tag_keys), tags, containers)


async def _asker_scope(folio: SlackFolio, *, team: str, channel: str, user: str, tags: tuple[Tag, ...]) -> Scope:
    """A new DM thread's scope for `user` (the thread does not exist yet), narrowed by `/ask` filters; InvalidInput
    for a filter outside it, as in a channel."""
    thread, policy = ThreadKey(team=team, channel=channel, thread_ts="-"), folio.channel_policy()
    outsider = await stranger(folio, team=team, user=user)
    if outsider is not None:  # only what their turn could search (bot.turns.boundary), else nothing is restated
        if outsider.dm_scope is None:
            raise Refused(messages.OUTSIDER_REFUSED)
        return narrow(outsider.dm_scope, tags, allowed_keys=policy.tag_keys)
    chosen = await scope_for_turn(policy, folio.access, thread=thread, user=user, is_dm=True, narrowing=())
    return narrow(chosen.scope, tags, allowed_keys=policy.tag_keys)


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


async def _ask_in_channel(
    folio: SlackFolio,
    client: AsyncWebClient,
    respond: AsyncRespond,
    parsed: AskCommand,
    scope: Scope | None,
    *,
    team: str,
    channel: str,
    user: str,
    is_dm: bool,
) -> None:
    try:
        if scope is None:  # a DM where the asker's access decides
            scope = await _asker_scope(folio, team=team, channel=channel, user=user, tags=parsed.tags)
        elif refusal := await channel_refusal(folio, team=team, channel=channel, user=user):
            raise Refused(refusal)  # said to the asker alone: the restatement would name the container to all
        message = render_question(parsed.question, user=user, scope=scope, thorough=parsed.thorough)
        await folio.store.ping()  # a question Folio cannot take on is not posted for everyone to see
        posted = await client.chat_postMessage(
            channel=channel, text=message.text, blocks=message.block_dicts(), unfurl_links=False, unfurl_media=False
        )
    except (FolioError, SlackApiError) as error:  # no thread exists yet: answer through the response_url
        try:
            await respond(response_type="ephemeral", text=describe_failure(error))
        except Exception:
            log.exception("could not tell %s that /ask failed", user)
        return
    thread = ThreadKey(team=team, channel=channel, thread_ts=str(posted["ts"]))
    request = TurnRequest(
        thread=thread,
        question=parsed.question,
        user=user,
        is_dm=is_dm,
        tags=parsed.tags,
        profile="thorough" if parsed.thorough else None,
        root_is_ours=True,
    )
    await start_turn(folio, client, request)
