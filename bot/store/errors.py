"""Redis failures leave the store as StoreUnavailable: one translation, shared by every store module."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.errors import StoreUnavailable
from bot.store.failures import REDIS_FAILURES, store_failure

log = logging.getLogger("bot.store")


@asynccontextmanager
async def redis_errors() -> AsyncIterator[None]:
    """A Redis failure leaves as StoreUnavailable (the sentence a person reads), its cause logged for the operator."""
    try:
        yield
    except REDIS_FAILURES as exc:
        log.warning("redis: %r", exc)  # the operator needs the cause; the user gets StoreUnavailable's sentence
        raise StoreUnavailable(store_failure(exc)) from exc
