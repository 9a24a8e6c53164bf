"""A ConversationStore on the session's real Redis, with keys under a per-test prefix."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from bot.store import ConversationStore


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[ConversationStore]:
    conversations = ConversationStore(Redis.from_url(redis_url), prefix=f"test-{uuid.uuid4().hex[:8]}")
    yield conversations
    await conversations.close()
