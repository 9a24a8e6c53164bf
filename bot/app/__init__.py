"""The composition root: `open_folio(settings)` builds every client Folio needs once, and closes each one it opened.

    async with open_folio(settings) as folio:          # a command, or `folio serve`
        ...
    given = Given(model=fake.client(), retriever=index, store=store, slack=client)
    async with open_folio(settings, given) as folio:  # tests: their own clients, as one value
        ...

Clients passed in belong to the caller and are not closed here. Only this package builds clients; `bot.slack`
and `bot.cli` take the `Folio` it yields.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.app import builders
from bot.app.redis_server import running_socket
from bot.app.sample import SAMPLE_CONTAINER, SAMPLE_CORPUS, ensure_sample_index
from bot.app.stores import Stores, stores_on
from bot.config import ChannelPolicy, Settings
from bot.config.policy_file import PolicyFile
from bot.errors import ConfigurationError
from bot.retrieval.local import LocalRetriever
from bot.tasks import BackgroundTasks, finish_or_hand_back
from bot.turns.budget import Budget, Limits

if TYPE_CHECKING:  # the clients load when built (bot.app.builders): a command that needs none starts faster
    from openai import AsyncOpenAI
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.access import Access
    from bot.agent import AgentOptions
    from bot.app.redis_server import EmbeddedRedis
    from bot.documents import DocumentStore, Links
    from bot.retrieval import SearchIndex
    from bot.store import ConversationStore

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 30.0  # seconds running turns may take to finish before the clients they use are closed


@dataclass(frozen=True, kw_only=True)
class Folio:
    """Everything a surface (Slack, a command) needs, built once by `open_folio`; nothing here is global.

    The parts only Slack uses are present when `open_folio` was asked to serve; Slack takes them as
    `bot.slack.services.SlackFolio`, where each is required (checked once, at start)."""

    settings: Settings
    model: AsyncOpenAI | None  # None: search-only answers
    retriever: SearchIndex  # searches (Retriever) and is written by ingestion (IndexWriter)
    options: AgentOptions
    links: Links
    policy: ChannelPolicy | PolicyFile | None  # a PolicyFile follows edits of channels.yaml; None: no policy file
    store: ConversationStore | None  # conversations in Redis: present when serving Slack
    slack: AsyncWebClient | None  # the Web API client: present when serving Slack
    tasks: BackgroundTasks
    access: Access | None = None  # who may search what in DMs and the assistant: present with a store and Slack
    redis_server: EmbeddedRedis | None = None  # the embedded Redis open_folio runs (REDIS_URL unset, serving)
    stores: Stores | None = None  # usage, traces, feedback beside the conversations: present with a store
    budget: Budget | None = None  # today's budgets and rate cap, on the usage counters: present with a store

    @property
    def documents(self) -> DocumentStore | None:
        """Folio's copies of indexed files (None when FOLIO_DOCS_BASE_URL serves the files instead)."""
        return self.links.documents

    @property
    def turn_timeout(self) -> float:
        return self.settings.folio_turn_timeout

    def channel_policy(self) -> ChannelPolicy:
        """The channel policy, or ConfigurationError saying how to create it."""
        if self.policy is None:
            raise self.no_policy()
        return self.policy.current() if isinstance(self.policy, PolicyFile) else self.policy

    def no_policy(self) -> ConfigurationError:
        """The error that says how to create the missing policy file."""
        path = self.settings.folio_channels_file
        return ConfigurationError(
            f"Channel policy file {path} does not exist. Copy channels.example.yaml to {path} "
            "or set FOLIO_CHANNELS_FILE to its path."
        )


@dataclass(frozen=True, kw_only=True)
class Given:
    """What a caller brings to `open_folio` instead of what it would build (tests: their fakes); each client given
    is the caller's, and not closed by `open_folio`. None: built from the settings."""

    model: AsyncOpenAI | None = None
    retriever: SearchIndex | None = None
    store: ConversationStore | None = None
    slack: AsyncWebClient | None = None
    policy: ChannelPolicy | PolicyFile | None = None  # None: the channels file, when it exists
    clock: Callable[[], float] = time.time  # what cached Slack memberships age by (a TTL passes without waiting)


@asynccontextmanager
async def open_folio(
    settings: Settings, given: Given | None = None, *, serving: bool = False, file_links: bool = False
) -> AsyncIterator[Folio]:
    """Build Folio from `settings` (and what is `given`), yield it, then let running turns finish and close what was
    built here.

    `serving` builds what Slack needs besides search and the model (the conversation store and the Web API client);
    `file_links` makes citations `file://` links to Folio's copies when nothing better is configured (terminal only).
    A local index that `open_folio` opens itself holds the shipped sample corpus (FOLIO_SAMPLE_CORPUS).
    """
    given = given or Given()
    model, retriever, store, slack, policy = given.model, given.retriever, given.store, given.slack, given.policy
    async with AsyncExitStack() as stack:
        credential = None
        if builders.needs_entra_id(settings) and (model is None or retriever is None):
            credential = builders.entra_credential()
            stack.push_async_callback(credential.close)
        if model is None:
            model = builders.model_client(settings, credential)
            if model is not None:
                stack.push_async_callback(model.close)
        links = builders.links(settings, file_links=file_links)
        if retriever is None:
            embeddings = builders.embedding_client(settings)
            if embeddings is not None:
                stack.push_async_callback(embeddings.close)
            embedder = builders.embedder(settings, embeddings or model)
            retriever = builders.retriever(settings, embedder=embedder, credential=credential)
            stack.push_async_callback(retriever.close)
            if settings.folio_sample_corpus and isinstance(retriever, LocalRetriever):
                await ensure_sample_index(retriever, links.documents)
        redis_server = None
        if store is None and serving:
            store, redis_server = await _store(settings, stack)
        if slack is None and serving and settings.slack_configured:
            session = builders.slack_http_session()
            stack.push_async_callback(session.close)
            slack = builders.slack_client(settings, session)
        if policy is None and settings.folio_channels_file.exists():
            policy = PolicyFile(settings.folio_channels_file)
        access = None
        if store is not None and slack is not None:
            access = builders.access(settings, store, slack, clock=given.clock)
        stores = stores_on(settings, store) if store is not None else None
        budget = Budget(stores.usage, limits=Limits.of(settings), policy=_current(policy)) if stores else None
        tasks = BackgroundTasks()
        stack.push_async_callback(_finish, tasks)  # runs first on the way out: turns still use the clients
        yield Folio(
            settings=settings,
            model=model,
            retriever=retriever,
            options=builders.agent_options(settings, links),
            links=links,
            policy=policy,
            store=store,
            slack=slack,
            tasks=tasks,
            access=access,
            redis_server=redis_server,
            stores=stores,
            budget=budget,
        )


def _current(policy: ChannelPolicy | PolicyFile | None) -> Callable[[], ChannelPolicy] | None:
    """Today's channel policy, as budgets read it (a channel's `daily_tokens`); None without a policy file."""
    if isinstance(policy, PolicyFile):
        return policy.current
    return None if policy is None else lambda: policy


@asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[Stores]:
    """Only the stores in Redis, for the commands that read Redis alone (`folio usage`, `trace`, `feedback`):
    REDIS_URL; else the embedded Redis a running `folio serve` owns in the data folder (this command only connects);
    else the data folder's own, started for the command and stopped after it."""
    async with AsyncExitStack() as stack:
        socket = None if settings.redis_url else running_socket(settings.folio_data_dir)
        if socket is not None:
            store = builders.store(settings, f"unix://{socket}")
            stack.push_async_callback(store.close)
        else:
            store, _ = await _store(settings, stack)
        yield stores_on(settings, store)


async def _store(settings: Settings, stack: AsyncExitStack) -> tuple[ConversationStore, EmbeddedRedis | None]:
    """The store on REDIS_URL, or on an embedded Redis started in the data folder; both closed with `stack`."""
    url, server = None, None
    if settings.redis_url is None and not settings.redis_cluster:
        server = await builders.embedded_redis(settings)
        stack.push_async_callback(server.stop)
        url = server.url
    store = builders.store(settings, url)  # url None: REDIS_URL, as a cluster with REDIS_CLUSTER=true
    stack.push_async_callback(store.close)
    return store, server


async def _finish(tasks: BackgroundTasks) -> None:
    """Let running turns end (they post their answers), then hand back what is left (`folio serve` has done so
    already, in its drain, before closing its listener; this catches every other command)."""
    if len(tasks):
        await finish_or_hand_back(tasks, grace=SHUTDOWN_GRACE)


__all__ = ["SAMPLE_CONTAINER", "SAMPLE_CORPUS", "Folio", "Stores", "open_folio", "open_store"]
