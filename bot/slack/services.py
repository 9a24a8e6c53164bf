"""`SlackFolio`: what serving Slack needs, each part required: the Folio `open_folio` built (its conversation store
and the stores beside it, the budget, the Slack Web API client, channel policy and access rules), plus the turn
consumer Slack wires to it and the memory of workspaces without streams.

A plain frozen value: `bot.slack.app.serving(folio)` checks once, at start, that every part is there (else
ConfigurationError saying what to set) and makes it; listeners and turns then use the parts without asking again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from slack_sdk.web.async_client import AsyncWebClient

from bot.access import Access
from bot.app import Folio, Stores
from bot.config import ChannelPolicy
from bot.config.policy_file import PolicyFile
from bot.slack.stream import StreamMemory
from bot.store import ConversationStore
from bot.store.pace import SharedPace
from bot.turns.budget import Budget
from bot.turns.consumer import Consumer
from bot.turns.governance import Ledger


@dataclass(frozen=True, kw_only=True)
class SlackFolio(Folio):
    """A Folio serving Slack."""

    store: ConversationStore
    slack: AsyncWebClient
    access: Access
    policy: ChannelPolicy | PolicyFile
    stores: Stores
    budget: Budget
    consumer: Consumer = field(repr=False, compare=False)  # the one door: runs this Folio's accepted turns
    streams: StreamMemory = field(default_factory=StreamMemory)  # this process's workspaces without streams

    @property
    def ledger(self) -> Ledger:
        """Where turns add their usage and keep their traces (traces None: FOLIO_TRACES=false)."""
        return self.stores.ledger

    @property
    def stream_pace(self) -> SharedPace:
        """Each workspace's budget of chat.appendStream calls, spent by every stream of every process (Redis)."""
        return self.stores.stream_pace
