"""`/ask [key:value ...] [--thorough] question`: restate the question publicly, then answer in its thread."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.app import Folio
from bot.config import ChannelPolicy
from bot.errors import InvalidInput, NotConnected, StoreUnavailable
from bot.models import Scope
from bot.slack.commands import AskCommand, parse_ask
from bot.slack.render import render_question
from bot.slack.scope import new_thread_scope
from bot.slack.turns import TurnRequest, describe_failure, start_turn
from bot.store import ThreadKey

log = logging.getLogger(__name__)


def register(app: AsyncApp, folio: Folio) -> None:
    @app.command("/ask")
    async def on_ask(
        ack: AsyncAck, command: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient, respond: AsyncRespond
    ) -> None:
        channel = command["channel_id"]
        is_dm = channel.startswith("D")
        policy = folio.channel_policy()
        try:
            parsed = parse_ask(command.get("text") or "", tag_keys=policy.tag_keys)
            if parsed.wants_help:
                await ack(response_type="ephemeral", text=help_text(policy, channel, is_dm=is_dm))
                return
            if len(parsed.question) > folio.options.max_question_chars:  # refused before it is restated publicly
                limit = folio.options.max_question_chars
                raise InvalidInput(messages.question_too_long(len(parsed.question), limit=limit))
            scope = new_thread_scope(policy, channel=channel, is_dm=is_dm, tags=parsed.tags)
        except (InvalidInput, NotConnected) as error:  # said only to the asker: nothing was posted yet
            await ack(response_type="ephemeral", text=str(error))
            return
        await ack()
        team = context.team_id or command.get("team_id") or "-"
        folio.tasks.spawn(
            _ask_in_channel(folio, client, respond, parsed, scope, team=team, channel=channel, user=command["user_id"],
                            is_dm=is_dm),
            name=f"ask {channel}",
        )  # fmt: skip


def help_text(policy: ChannelPolicy, channel: str, *, is_dm: bool) -> str:
    """`/ask help`: the syntax, and the container and filters of this channel."""
    try:
        rule = policy.rule_for(channel, is_dm=is_dm)
    except NotConnected:
        return messages.ask_help(list(policy.tag_keys), [], None)
    return messages.ask_help(list(policy.tag_keys), [str(tag) for tag in rule.tags], rule.container)


async def _ask_in_channel(
    folio: Folio, client: AsyncWebClient, respond: AsyncRespond, parsed: AskCommand, scope: Scope, *,
    team: str, channel: str, user: str, is_dm: bool,
) -> None:  # fmt: skip
    message = render_question(parsed.question, user=user, scope=scope, thorough=parsed.thorough)
    assert folio.store is not None
    try:
        await folio.store.ping()  # a question Folio cannot take on is not posted for everyone to see
        posted = await client.chat_postMessage(channel=channel, text=message.text, blocks=message.block_dicts(),
                                               unfurl_links=False, unfurl_media=False)  # fmt: skip
    except (StoreUnavailable, SlackApiError) as error:  # no thread exists yet: answer through the response_url
        try:
            await respond(response_type="ephemeral", text=describe_failure(error))
        except Exception:
            log.exception("could not tell %s that /ask failed", user)
        return
    thread = ThreadKey(team=team, channel=channel, thread_ts=str(posted["ts"]))
    request = TurnRequest(
        thread=thread, question=parsed.question, user=user, is_dm=is_dm, tags=parsed.tags,
        profile="thorough" if parsed.thorough else None, root_is_ours=True,
    )  # fmt: skip
    await start_turn(folio, client, request)
