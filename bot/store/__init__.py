"""Conversation state in Redis: the thread record, the intake of accepted deliveries and the per-thread lock."""

from bot.errors import LeaseLost, ThreadBusy
from bot.store.conversations import THIRTY_DAYS, ConversationStore, ThreadKey
from bot.store.errors import redis_errors
from bot.store.intake import Claimed, Intake
from bot.store.lock import ThreadLock

__all__ = [
    "THIRTY_DAYS",
    "Claimed",
    "ConversationStore",
    "Intake",
    "LeaseLost",
    "ThreadBusy",
    "ThreadKey",
    "ThreadLock",
    "redis_errors",
]
