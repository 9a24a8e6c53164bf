"""Slack's AI app surface: the greeting and suggested prompts when a person opens Folio, and thread titles.

Two experiences exist (see docs/slack-admins.md, "The assistant"). With `assistant_view` each conversation is an assistant thread:
`assistant_thread_started` gets a greeting and prompts set on that thread (`thread_ts`). With `agent_view` (the
default for apps created since mid-2026) conversations live in the Messages tab: opening it (`app_home_opened`, tab
`messages`) gets prompts set without `thread_ts`, which Slack requires there (a `thread_ts` makes the call fail
silently). Everything here is best effort: a failure is logged, and the person can still ask.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.access import Access, prompts_for
from bot.app import Folio
from bot.errors import FolioError, NotConnected
from bot.slack.outsiders import stranger
from bot.slack.render import escape
from bot.store import ThreadKey

log = logging.getLogger(__name__)

TITLE_CHARS = 80  # a thread title is a line in Slack's history list, not the whole question


async def greet(folio: Folio, client: AsyncWebClient, thread: ThreadKey, user: str) -> None:
    """A new assistant thread: say what Folio searches for this person here, and offer prompts for it."""
    text, containers = await _welcome(folio, thread, user)
    try:
        greeting = await client.chat_postMessage(channel=thread.channel, thread_ts=thread.thread_ts, text=text)
        if folio.access is not None:  # deleting the conversation deletes the greeting too
            await folio.access.greeted(thread, str(greeting["ts"]))
        if containers:
            await _offer(folio, client, channel=thread.channel, thread_ts=thread.thread_ts, containers=containers)
    except (SlackApiError, FolioError) as exc:
        log.warning("could not greet in %s: %s", thread, exc)


async def offer_prompts(folio: Folio, client: AsyncWebClient, *, team: str, channel: str, user: str) -> None:
    """agent_view: the person opened Folio's Messages tab; prompts for what they may search there (no thread_ts)."""
    _, containers = await _welcome(folio, ThreadKey(team=team, channel=channel, thread_ts="-"), user)
    if not containers:
        return
    try:
        await _offer(folio, client, channel=channel, thread_ts=None, containers=containers)
    except SlackApiError as exc:
        log.info("suggested prompts refused in %s: %s", channel, exc.response.get("error"))


async def _welcome(folio: Folio, thread: ThreadKey, user: str) -> tuple[str, tuple[str, ...]]:
    """The greeting, and the containers to offer prompts for: none for a person of another organisation (the
    policy's prompts are written for this one), who hears only what they may search, if anything."""
    try:
        outsider = await stranger(folio, team=thread.team, user=user)
    except FolioError as exc:  # Slack cannot say who they are: name nothing
        log.info("greeting without containers for %s: %s", user, exc)
        return messages.assistant_greeting(None), ()
    if outsider is not None:
        if outsider.dm_scope is None:
            return messages.OUTSIDER_REFUSED, ()
        return messages.assistant_greeting([escape(name) for name in outsider.dm_scope.containers]), ()
    containers = await _searchable(folio, thread, user)
    names = None if containers is None else [escape(name) for name in containers]
    return messages.assistant_greeting(names), containers or ()


async def name_thread(access: Access, client: AsyncWebClient, thread: ThreadKey, user: str, question: str) -> None:
    """The first question of an assistant thread becomes its title."""
    try:
        if not await access.claim_title(thread, user):
            return
        title = " ".join(question.split())
        title = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"
        await client.assistant_threads_setTitle(channel_id=thread.channel, thread_ts=thread.thread_ts, title=title)
    except (FolioError, SlackApiError) as exc:
        log.warning("could not title %s: %s", thread, exc)


async def clear_thread(access: Access, client: AsyncWebClient, thread: ThreadKey) -> None:
    """The conversation was deleted: its greeting goes, its title no longer shows the first question, and the
    thread's keys go (a failure in Slack is logged; the deletion goes on)."""
    titled, greeting = await access.forget_thread(thread)
    if greeting is not None:
        await _cleared("the greeting", thread, client.chat_delete(channel=thread.channel, ts=greeting))
    if titled:
        await _cleared(
            "the title",
            thread,
            client.assistant_threads_setTitle(
                channel_id=thread.channel, thread_ts=thread.thread_ts, title=messages.DELETED_TITLE
            ),
        )


async def _cleared(what: str, thread: ThreadKey, call: Awaitable[object]) -> None:
    try:
        await call
    except SlackApiError as exc:
        if exc.response.get("error") != "message_not_found":  # gone already is cleared
            log.warning("could not clear %s of %s: %s", what, thread, exc.response.get("error"))


async def _searchable(folio: Folio, thread: ThreadKey, user: str) -> tuple[str, ...] | None:
    """The containers a DM turn of `user` in `thread` would search now; () for none, None when unknown."""
    policy = folio.channel_policy()
    try:
        chosen = await folio.access.choose(policy, thread=thread, user=user) if folio.access else None
        scope = chosen.scope if chosen else policy.scope_for(thread.channel, is_dm=True)
    except FolioError as exc:  # NotConnected: nothing to search; AccessUnavailable: cannot tell yet
        log.info("greeting without containers for %s: %s", user, exc)
        return () if isinstance(exc, NotConnected) else None
    return scope.containers


async def _offer(
    folio: Folio, client: AsyncWebClient, *, channel: str, thread_ts: str | None, containers: tuple[str, ...]
) -> None:
    prompts = [{"title": p.title, "message": p.message} for p in prompts_for(folio.channel_policy(), containers)]
    await client.assistant_threads_setSuggestedPrompts(
        channel_id=channel, thread_ts=thread_ts, title=messages.PROMPTS_TITLE, prompts=prompts
    )
