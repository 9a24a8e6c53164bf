"""`SlackFolio`: what serving Slack needs, each part required: the Folio `open_folio` built, plus its conversation
store, Slack Web API client, channel policy and access rules, and the memory of workspaces without streams.

`SlackFolio.of(folio)` checks once, at start, that they are all there (else ConfigurationError saying what to set);
listeners and turns then use them without asking again. Each SlackFolio holds its own turn consumer
(`bot.slack.consumer`), made with it: one per serving Folio, no registry.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from slack_sdk.web.async_client import AsyncWebClient

from bot.access import Access
from bot.app import Folio
from bot.config import ChannelPolicy
from bot.config.policy_file import PolicyFile
from bot.errors import ConfigurationError
from bot.slack.stream import StreamMemory, append_pace
from bot.store import ConversationStore
from bot.store.pace import SharedPace
from bot.store.traces import TraceStore
from bot.store.usage import UsageStore
from bot.turns.budget import Budget, Limits
from bot.turns.governance import Ledger

if TYPE_CHECKING:
    from bot.slack.consumer import Consumer


@dataclass(frozen=True, kw_only=True)
class SlackFolio(Folio):
    """A Folio serving Slack."""

    store: ConversationStore
    slack: AsyncWebClient
    access: Access
    policy: ChannelPolicy | PolicyFile
    streams: StreamMemory = field(default_factory=StreamMemory)  # this process's workspaces without streams
    consumer: Consumer = field(init=False, repr=False, compare=False)  # runs this Folio's accepted turns

    def __post_init__(self) -> None:
        from bot.slack.consumer import Consumer  # it runs turns on this value: imported here, not at the top

        object.__setattr__(self, "consumer", Consumer(self))  # frozen: set once, as the value is made

    @functools.cached_property
    def ledger(self) -> Ledger:
        """Where turns add their usage and keep their traces (the conversation store's Redis)."""
        settings = self.settings
        redis, prefix = self.store.keyspace("usage")
        usage = UsageStore(redis, prefix=prefix, retention_days=settings.folio_usage_retention_days)
        traces = TraceStore(redis, prefix=self.store.keyspace("trace")[1]) if settings.folio_traces else None
        return Ledger(usage, traces)

    @functools.cached_property
    def stream_pace(self) -> SharedPace:
        """Each workspace's budget of chat.appendStream calls, spent by every stream of every process (Redis)."""
        redis, prefix = self.store.keyspace("stream-appends")
        per_minute, burst = append_pace(self.settings.folio_stream_appends_per_minute)
        return SharedPace(redis, prefix=prefix, per_minute=per_minute, burst=burst)

    @functools.cached_property
    def budget(self) -> Budget:
        """Today's budgets and rate cap, checked by every Slack turn."""
        return Budget(self.ledger.usage, limits=Limits.of(self.settings), policy=self.channel_policy)

    @classmethod
    def of(cls, folio: Folio) -> SlackFolio:
        """`folio` as a SlackFolio; ConfigurationError naming what is missing (the token, the policy file)."""
        if isinstance(folio, SlackFolio):
            return folio
        if folio.slack is None or folio.store is None or folio.access is None:
            raise ConfigurationError("SLACK_BOT_TOKEN is not set. Copy the Bot User OAuth Token (xoxb-...) into .env.")
        if folio.policy is None:  # a missing policy file stops Folio at start, with what to do
            raise folio.no_policy()
        parts = {each.name: getattr(folio, each.name) for each in dataclasses.fields(Folio)}
        return cls(**{**parts, "store": folio.store, "slack": folio.slack, "access": folio.access,
                      "policy": folio.policy})  # fmt: skip
