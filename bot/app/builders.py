"""The builders `open_folio` assembles Folio from: each takes plain values from Settings and returns one client.

They open nothing that outlives the caller's `AsyncExitStack`: every client they return has a close the caller
registers. Only `bot.app` imports this module.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bot import logs, messages
from bot.app.redis_client import redis_client
from bot.config import Settings
from bot.errors import ConfigurationError
from bot.ingest.converters import Converters, OcrMode

if TYPE_CHECKING:  # each SDK is imported by the builder that needs it: a command loads only the clients it uses
    import aiohttp
    from azure.core.credentials_async import AsyncTokenCredential
    from openai import AsyncOpenAI
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.access import Access
    from bot.agent import AgentOptions
    from bot.app.redis_server import EmbeddedRedis
    from bot.app.slack_calls import ChannelPacer, PacedWebClient
    from bot.documents import Links
    from bot.retrieval.azure import AzureSearchRetriever, AzureVectorizer
    from bot.retrieval.embedders import OpenAIEmbedder
    from bot.retrieval.local import LocalRetriever
    from bot.store import ConversationStore

log = logging.getLogger(__name__)

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"
SLACK_CALL_TIMEOUT = 30  # seconds, slack_sdk's own default for one Web API call


def model_client(settings: Settings, credential: AsyncTokenCredential | None) -> AsyncOpenAI | None:
    """An async Responses API client, or None when no model is configured (search-only answers).

    Azure OpenAI is reached through its v1 endpoint (`{endpoint}/openai/v1/`), which speaks the same API as OpenAI,
    so one client type serves both; without a key it authenticates with Entra ID through `credential`. The SDK's
    aiohttp transport (openai's own `DefaultAioHttpClient`) costs about 5 ms less CPU per turn than its default
    httpx one (benchmarks/RESULTS.md).
    """
    if not settings.model_configured:
        return None
    from openai import AsyncOpenAI, DefaultAioHttpClient

    if settings.azure_openai_endpoint:
        base_url = settings.azure_openai_endpoint.rstrip("/") + "/openai/v1/"
        if settings.azure_openai_api_key:
            return AsyncOpenAI(
                api_key=settings.azure_openai_api_key.get_secret_value(),
                base_url=base_url,
                http_client=DefaultAioHttpClient(),
            )
        from azure.identity.aio import get_bearer_token_provider

        if credential is None:  # open_folio makes it whenever the settings ask for Entra ID
            raise ConfigurationError("Entra ID needs a credential: open Folio with open_folio(settings).")
        return AsyncOpenAI(
            api_key=get_bearer_token_provider(credential, AZURE_SCOPE),
            base_url=base_url,
            http_client=DefaultAioHttpClient(),
        )
    if settings.openai_api_key:
        return AsyncOpenAI(
            api_key=settings.openai_api_key.get_secret_value(),
            base_url=settings.openai_base_url,
            http_client=DefaultAioHttpClient(),
        )
    return None


def needs_entra_id(settings: Settings) -> bool:
    """Whether some client authenticates with Entra ID (no key given for an Azure service in use)."""
    model = bool(settings.azure_openai_endpoint and not settings.azure_openai_api_key)
    search = bool(settings.azure_search_endpoint and not settings.azure_search_key)
    return model or search


def entra_credential() -> AsyncTokenCredential:
    """DefaultAzureCredential: managed identity in Azure, `az login` on a laptop. Close it when done."""
    from azure.identity.aio import DefaultAzureCredential

    return DefaultAzureCredential()


def embedding_client(settings: Settings) -> AsyncOpenAI | None:
    """A client of FOLIO_EMBEDDING_BASE_URL when embeddings come from another server than the model (a local e5
    server, another provider), else None: the model's client embeds."""
    if not (settings.folio_embedding_model and settings.folio_embedding_base_url):
        return None
    from openai import AsyncOpenAI, DefaultAioHttpClient

    key = settings.folio_embedding_api_key.get_secret_value() if settings.folio_embedding_api_key else "not-needed"
    return AsyncOpenAI(api_key=key, base_url=settings.folio_embedding_base_url, http_client=DefaultAioHttpClient())


def embedder(settings: Settings, model: AsyncOpenAI | None) -> OpenAIEmbedder | None:
    """The embedding client for hybrid search (sharing the model's client), or None for keyword-only search."""
    if not settings.folio_embedding_model:
        return None
    if model is None:
        raise ConfigurationError(
            "FOLIO_EMBEDDING_MODEL is set but no model service is: set OPENAI_API_KEY or AZURE_OPENAI_ENDPOINT (or "
            "FOLIO_EMBEDDING_BASE_URL), or unset FOLIO_EMBEDDING_MODEL for keyword-only search."
        )
    from bot.retrieval.embedders import OpenAIEmbedder

    return OpenAIEmbedder(
        model,
        model=settings.folio_embedding_model,
        dimensions=settings.folio_embedding_dimensions,
        query_prefix=settings.folio_embedding_query_prefix,
        document_prefix=settings.folio_embedding_document_prefix,
        query_model=settings.folio_embedding_query_model,
    )


def retriever(
    settings: Settings, *, embedder: OpenAIEmbedder | None, credential: AsyncTokenCredential | None
) -> LocalRetriever | AzureSearchRetriever:
    """Azure AI Search when AZURE_SEARCH_ENDPOINT is set, else the local index file in FOLIO_DATA_DIR."""
    if settings.azure_search_endpoint:
        from azure.core.credentials import AzureKeyCredential

        from bot.retrieval.azure import AzureSearchRetriever

        key = settings.azure_search_key
        return AzureSearchRetriever(
            endpoint=settings.azure_search_endpoint,
            index_name=settings.azure_search_index,
            credential=AzureKeyCredential(key.get_secret_value()) if key else credential,  # type: ignore[arg-type]
            semantic=settings.azure_search_semantic,
            score_gap=settings.folio_score_gap,
            embedder=embedder,
            vectorizer=_search_vectorizer(settings),
        )
    from bot.retrieval.local import LocalRetriever

    folder = data_dir(settings)
    return LocalRetriever(
        folder / "index.sqlite",
        embedder=embedder,
        score_gap=settings.folio_score_gap,
        vector_weight=settings.folio_vector_weight,
    )


def _search_vectorizer(settings: Settings) -> AzureVectorizer | None:
    """Azure OpenAI embeds queries inside Azure AI Search when both live in Azure; else Folio embeds them."""
    if not (settings.folio_embedding_model and settings.azure_openai_endpoint):
        return None
    from bot.retrieval.azure import AzureVectorizer

    key = settings.azure_openai_api_key
    return AzureVectorizer(
        resource_url=settings.azure_openai_endpoint,
        deployment=settings.folio_embedding_model,
        dimensions=settings.folio_embedding_dimensions,
        api_key=key.get_secret_value() if key else None,
    )


def data_dir(settings: Settings) -> Path:
    """FOLIO_DATA_DIR, created private (0700: it holds every container's full text) and announced when missing (a
    line for the person at the terminal, or a log record where the logs are JSON); ConfigurationError naming the
    setting when it cannot be written."""
    from bot.documents import private_folder

    folder = settings.folio_data_dir
    try:
        created = not folder.exists()
        private_folder(folder)
        probe = folder / ".folio-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise ConfigurationError(
            f"FOLIO_DATA_DIR ({folder}) cannot be created or written ({exc.strerror or exc}). "
            "Set FOLIO_DATA_DIR to a folder Folio may write, for example FOLIO_DATA_DIR=$HOME/.folio."
        ) from exc
    if created:  # a line for the person at the terminal, or a log record where the logs are JSON
        logs.say(messages.data_folder_created(folder.resolve()), level=logging.WARNING)
    return folder


def store(settings: Settings, url: str | None = None) -> ConversationStore:
    """A ConversationStore on REDIS_URL (as a cluster with REDIS_CLUSTER=true), or on `url`: the embedded Redis's
    socket."""
    from bot.app.redis_client import RedisOptions, blocking_client
    from bot.store import ConversationStore

    hold = settings.folio_turn_timeout + 60  # how long a thread's earlier turns may keep a new one waiting (x 3)
    if url is not None:
        return ConversationStore(redis_client(url), lock_hold_seconds=hold, blocking=blocking_client(url))
    if settings.redis_url is None:
        raise ConfigurationError(messages.REDIS_CLUSTER_NEEDS_URL if settings.redis_cluster else "REDIS_URL is not set")
    options = RedisOptions.of(settings)
    if not options.verify:
        logs.say(messages.REDIS_TLS_UNVERIFIED, level=logging.WARNING)
    return ConversationStore(
        redis_client(settings.redis_url, options),
        lock_hold_seconds=hold,
        blocking=blocking_client(settings.redis_url, options),
    )


async def embedded_redis(settings: Settings) -> EmbeddedRedis:
    """The supervised embedded Redis in the data folder (when REDIS_URL is unset). Stop it when done."""
    from bot.app.redis_server import EmbeddedRedis

    return await EmbeddedRedis.start(data_dir(settings))


def slack_http_session() -> aiohttp.ClientSession:
    """The one HTTP session every Web API call goes through; open it in a running loop, close it on shutdown.

    Without it slack_sdk opens a new session, and so a new connection, for every call.
    """
    import aiohttp

    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=SLACK_CALL_TIMEOUT))


def slack_client(
    settings: Settings, session: aiohttp.ClientSession, *, pacer: ChannelPacer | None = None
) -> PacedWebClient:
    """The Web API client on SLACK_API_URL, retrying rate limits (HTTP 429 after Retry-After) and dropped connections,
    its chat.postMessage paced per channel by `pacer` (Slack's documented pace unless given: see `ChannelPacer`).

    slack_sdk retries only connection errors by default, so the rate-limit handler is added here. The session's
    pooled connections are reused across calls; a kept-alive connection the server closed meanwhile is a
    connection error, retried once on a new connection.
    """
    from slack_sdk.http_retry.async_handler import AsyncRetryHandler
    from slack_sdk.http_retry.builtin_async_handlers import (
        AsyncConnectionErrorRetryHandler,
    )

    from bot.app.slack_calls import ChannelPacer, PacedWebClient, RateLimitRetry, SlackCallMeter

    if settings.slack_bot_token is None:
        raise ConfigurationError("SLACK_BOT_TOKEN is not set. Copy the Bot User OAuth Token (xoxb-...) into .env.")
    retries: list[AsyncRetryHandler] = [
        SlackCallMeter(),
        AsyncConnectionErrorRetryHandler(max_retry_count=1),
        RateLimitRetry(max_retry_count=3),
    ]
    return PacedWebClient(
        pacer=ChannelPacer() if pacer is None else pacer,
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        retry_handlers=retries,
        session=session,
        timeout=SLACK_CALL_TIMEOUT,
    )


def links(settings: Settings, *, file_links: bool) -> Links:
    """The citation-link policy from Settings (see `bot.documents.Links`)."""
    from bot.documents import DocumentStore, Links

    if settings.folio_docs_base_url:
        return Links(docs_base_url=settings.folio_docs_base_url)
    documents = DocumentStore(documents_folder(settings.folio_data_dir))
    key = link_signing_key(settings) if settings.folio_public_url else None
    return Links(
        documents=documents,
        public_url=settings.folio_public_url,
        key=key,
        ttl_days=settings.folio_link_ttl_days,
        file_links=file_links,
    )


def link_signing_key(settings: Settings) -> bytes:
    """FOLIO_LINK_SECRET, else a key derived from SLACK_SIGNING_SECRET, else a random key kept in the data folder."""
    from bot.documents import link_key

    link, slack = settings.folio_link_secret, settings.slack_signing_secret
    return link_key(
        data_dir(settings),
        link_secret=link.get_secret_value() if link else None,
        slack_signing_secret=slack.get_secret_value() if slack else None,
    )


def converters(settings: Settings, *, ocr: OcrMode | None = None) -> Converters:
    """The converting programs and OCR options of an indexing run (`ocr`: --ocr, over FOLIO_OCR)."""
    return Converters(
        soffice=settings.folio_soffice,
        ocrmypdf=settings.folio_ocrmypdf,
        tesseract=settings.folio_tesseract,
        ocr=ocr or settings.folio_ocr,
        languages=settings.folio_ocr_languages,
        timeout=settings.folio_convert_timeout,
        jobs=settings.folio_convert_jobs,
        unpacked_mb=settings.folio_max_unpacked_mb,
    )


def documents_folder(data_dir: Path) -> Path:
    """Where Folio keeps its copy of every indexed file: `<data dir>/documents/<container>/<file>`."""
    return data_dir / "documents"


def agent_options(settings: Settings, links: Links) -> AgentOptions:
    """The agent's options from Settings, with citations linked by `links`."""
    from bot.agent import AgentOptions
    from bot.agent.state import ModelState

    return AgentOptions(
        model_fast=settings.folio_model_fast,
        model_thorough=settings.thorough_model,
        effort_fast=settings.folio_effort_fast,
        effort_thorough=settings.folio_effort_thorough,
        reasoning=settings.folio_reasoning,
        code_interpreter=settings.folio_code_interpreter,
        max_iterations=settings.folio_max_iterations,
        chunk_budget=settings.folio_chunk_budget,
        search_top=settings.folio_search_top,
        verify_citations=settings.folio_verify_citations,
        max_question_chars=settings.folio_max_question_chars,
        link_for=links.link_for,
        model_state=ModelState(settings.folio_model_state),
        history_chars=settings.folio_client_history_chars,
    )


def access(
    settings: Settings, store: ConversationStore, slack: AsyncWebClient, *, clock: Callable[[], float] = time.time
) -> Access:
    """Per-person access for DMs and the assistant: Slack membership cached in the store's Redis (FOLIO_ACCESS_TTL,
    measured on `clock`)."""
    from bot.access import Access, Memberships, Organisation

    redis, prefix = store.keyspace("access")
    memberships = Memberships(redis, slack, prefix=prefix, ttl=settings.folio_access_ttl, clock=clock)
    organisation = Organisation(redis, slack, prefix=prefix, ttl=settings.folio_access_ttl)
    return Access(redis, memberships, organisation, prefix=prefix)
