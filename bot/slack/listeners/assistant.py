"""Slack's AI app surface: a person opens Folio beside a channel, moves to another channel, or opens its Messages tab
(prompts) or its Home tab (published for that person: bot.slack.home).

What a person views is remembered before the ack (one Redis write), so the question that follows is scoped by it;
greetings and prompts are sent after the ack.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import assistant, home
from bot.slack.services import SlackFolio
from bot.store import ThreadKey

log = logging.getLogger(__name__)

CHANNEL_ENTITY = "slack#/types/channel_id"


def register(app: AsyncApp, folio: SlackFolio) -> None:
    @app.event("assistant_thread_started")
    async def on_thread_started(event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient) -> None:
        if (found := _assistant_thread(event, context)) is None:
            return
        thread, user, viewing = found
        await folio.access.thread_started(thread, user=user, viewing=viewing)
        folio.tasks.spawn(assistant.greet(folio, client, thread, user), name=f"greet {thread}")

    @app.event("assistant_thread_context_changed")
    async def on_thread_context_changed(event: dict[str, Any], context: AsyncBoltContext) -> None:
        if (found := _assistant_thread(event, context)) is not None:
            thread, user, viewing = found
            await folio.access.thread_viewing(thread, user=user, viewing=viewing)

    @app.event("app_context_changed")
    async def on_app_context_changed(event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext) -> None:
        user = event.get("user") or _person(body)
        if user:
            await folio.access.person_viewing(_team(context, body), user, _viewed_channel(event))

    @app.event("app_home_opened")
    async def on_home_opened(event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient) -> None:
        user, team = event.get("user"), _team(context, {})
        if event.get("tab") == "home" and user:  # published for this person (an admin's holds "Why this answer?")
            folio.tasks.spawn(home.publish(folio, client, team=team, user=user), name=f"home {user}")
        if event.get("tab") != "messages" or not event.get("channel") or not user:
            return
        work = assistant.offer_prompts(folio, client, team=team, channel=event["channel"], user=user)
        folio.tasks.spawn(work, name=f"prompts {event['channel']}")


def _assistant_thread(event: dict[str, Any], context: AsyncBoltContext) -> tuple[ThreadKey, str, str | None] | None:
    """The thread, its person and the channel they view, from an assistant_thread_* event."""
    described = event.get("assistant_thread") or {}
    channel, thread_ts, user = described.get("channel_id"), described.get("thread_ts"), described.get("user_id")
    if not (channel and thread_ts and user):
        log.warning("assistant event without its thread: %s", sorted(described))
        return None
    viewing = (described.get("context") or {}).get("channel_id") or None
    return ThreadKey(team=_team(context, {}), channel=channel, thread_ts=thread_ts), user, viewing


def _viewed_channel(event: dict[str, Any]) -> str | None:
    """The most relevant channel in an app_context_changed event (Slack orders entities by relevance)."""
    for entity in (event.get("context") or {}).get("entities") or []:
        if entity.get("type") == CHANNEL_ENTITY and entity.get("value"):
            return str(entity["value"])
    return None


def _person(body: dict[str, Any]) -> str | None:
    """app_context_changed names the person in its authorizations when the event itself does not."""
    for authorization in body.get("authorizations") or []:
        if not authorization.get("is_bot") and authorization.get("user_id"):
            return str(authorization["user_id"])
    return None


def _team(context: AsyncBoltContext, body: dict[str, Any]) -> str:
    return context.team_id or body.get("team_id") or "-"
