"""Every Redis store Folio keeps, built once, here, on the conversations' Redis: the one place that reads
`ConversationStore.keyspace` (besides the access caches, `builders.access`).

    stores = stores_on(settings, conversations)    # open_folio and open_store
    stores.usage, stores.traces, stores.feedback, stores.conversations.intake
    stores.ledger       # where governed turns write: usage, and traces unless FOLIO_TRACES=false
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.config import Settings
from bot.store import ConversationStore
from bot.store.feedback import FeedbackStore
from bot.store.pace import SharedPace, append_pace
from bot.store.traces import TraceStore
from bot.store.usage import UsageStore
from bot.turns.governance import Ledger


@dataclass(frozen=True, kw_only=True)
class Stores:
    """The conversations (their locks and the durable intake with them), usage and traces, feedback records."""

    conversations: ConversationStore
    usage: UsageStore
    traces: TraceStore  # read by `folio trace` and "Why this answer?" whatever FOLIO_TRACES says now
    feedback: FeedbackStore
    ledger: Ledger  # what turns write to: `usage`, and `traces` unless FOLIO_TRACES=false
    stream_pace: SharedPace  # each workspace's chat.appendStream budget, shared by every stream of every process


def stores_on(settings: Settings, conversations: ConversationStore) -> Stores:
    """The stores beside `conversations`, in its Redis, each under its own key prefix."""
    redis, usage_prefix = conversations.keyspace("usage")
    usage = UsageStore(redis, prefix=usage_prefix, retention_days=settings.folio_usage_retention_days)
    traces = TraceStore(redis, prefix=conversations.keyspace("trace")[1])
    return Stores(
        conversations=conversations,
        usage=usage,
        traces=traces,
        feedback=FeedbackStore(redis, conversations.keyspace("feedback")[1]),
        ledger=Ledger(usage, traces if settings.folio_traces else None),
        stream_pace=_stream_pace(settings, conversations),
    )


def _stream_pace(settings: Settings, conversations: ConversationStore) -> SharedPace:
    redis, prefix = conversations.keyspace("stream-appends")
    per_minute, burst = append_pace(settings.folio_stream_appends_per_minute)
    return SharedPace(redis, prefix=prefix, per_minute=per_minute, burst=burst)
