"""Conversation state in Redis: the thread record, delivery dedupe and the per-thread lock."""

from bot.errors import ThreadBusy
from bot.store.conversations import THIRTY_DAYS, ConversationStore, ThreadKey, redis_errors
from bot.store.lock import ThreadLock

__all__ = ["THIRTY_DAYS", "ConversationStore", "ThreadBusy", "ThreadKey", "ThreadLock", "redis_errors"]
