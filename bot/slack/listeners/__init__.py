"""Bolt listeners, one module per concern. Each reads its payload, records the delivery (bot.turns.consumer
`accept`: durable, deduped, its place in the thread's queue taken) and hands off the work to a background task
before Bolt acknowledges (the app runs with process_before_response=True, so a listener that raises is answered 500
and Slack delivers the event again)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.slack.listeners import actions, ask, assistant, feedback, messages, private, shared, subteams, why
from bot.slack.services import SlackFolio


def register(app: AsyncApp, folio: SlackFolio) -> None:
    """Attach every listener to `app`."""
    for module in (messages, ask, actions, assistant, subteams, shared, feedback, private, why):
        module.register(app, folio)
