"""The real Bolt app on 127.0.0.1 with its clients on fakes: see tests/slack/harness.py."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from redis.asyncio import Redis
from slack_sdk.models.blocks import Block

from bot.app import Given, open_folio
from bot.app.builders import redis_client, slack_client, slack_http_session
from bot.app.redis_client import RedisOptions, blocking_client
from bot.app.slack_calls import ChannelPacer
from bot.config import ChannelPolicy, Settings
from bot.retrieval.local import LocalRetriever
from bot.slack.app import EVENTS_PATH, build_app, serving, web_app
from bot.store import ConversationStore
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import FakeSlack
from tests.slack.harness import ADMIN, POLICY, SECRET, Harness, RecordingRetriever

UNPACED = partial(ChannelPacer, per_second=1000.0, burst=1000)  # a fresh one per app


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(admins={ADMIN}) as fake:
        yield fake
        sent = fake.calls_of("chat.postMessage") + fake.calls_of("chat.update") + fake.calls_of("chat.stopStream")
        for params in sent:
            for block in params.get("blocks") or []:  # every message Folio sent is valid Block Kit
                Block.parse(block).validate_json()


@pytest.fixture
def fake_model() -> Iterator[FakeResponses]:
    with FakeResponses() as fake:
        yield fake
        assert fake.problems == []


@asynccontextmanager
async def running_app(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    *,
    with_model: bool = True,
    turn_timeout: float = 20,
    redis: str | None = None,
    policy: dict | None = None,
    access_ttl: int = 300,
    prefix: str | None = None,
    streaming: bool = False,
    policy_file: Path | None = None,
    channel_policy: ChannelPolicy | None = None,
    clock: Callable[[], float] = time.time,
    lock_lease: float = 10.0,
    production_client: bool = False,
    pacer: ChannelPacer | None = None,
    redis_options: RedisOptions | None = None,
    **overrides: Any,
) -> AsyncIterator[Harness]:
    """The app on 127.0.0.1 with its clients on the fakes; `redis` overrides the Redis URL (e.g. a dead one), and
    the same `prefix` twice is the same state across a restart (e.g. with another policy); `policy_file`: read the
    policy from that channels.yaml, as `folio serve` does, instead of `policy`; `channel_policy`: that policy value
    itself (e.g. one that counts its lookups); `clock`: what cached memberships age by; `overrides` (e.g.
    folio_log_content=True) go to Settings. `lock_lease`: the thread lock's and the intake's lease;
    `production_client`: Redis through `folio serve`'s client (its pool and reconnect policy);
    `redis_options`: `folio serve`'s client made with them (a cluster, TLS) on `redis`. `pacer`:
    chat.postMessage's pace per channel; none to speak of unless given (Slack's, a second a post past the third in
    one channel, would only slow tests about other things: tests/slack/test_stream_limits.py drives it).

    Streaming is off unless asked for: most tests read today's status line and answer message (tests/slack/
    test_stream.py drives the streamed turns)."""
    settings = Settings(
        **{
            "slack_bot_token": "xoxb-test-token",
            "slack_signing_secret": SECRET,
            "slack_api_url": slack.base_url,
            "folio_turn_timeout": turn_timeout,
            "folio_docs_base_url": "https://docs.example",
            "folio_code_interpreter": False,
            "folio_model_fast": "gpt-5-mini",
            "folio_model_thorough": "gpt-5",
            "folio_access_ttl": access_ttl,
            "folio_streaming": streaming,
            **({"folio_channels_file": policy_file} if policy_file else {}),
            **overrides,  # overrides win
        }
    )
    client = (redis_client if production_client else Redis.from_url)(redis or redis_url)  # production: reconnects
    if redis_options is not None:  # e.g. a cluster client (tests/store/test_cluster.py)
        client = redis_client(redis or redis_url, redis_options)
    blocking = blocking_client(redis or redis_url, redis_options or RedisOptions())  # the accept's, as `folio serve`
    store = ConversationStore(
        client,
        prefix=prefix or f"slack-{uuid.uuid4().hex[:8]}",
        lock_hold_seconds=30,
        lock_lease_seconds=lock_lease,
        blocking=blocking,
    )
    retriever = RecordingRetriever(LocalRetriever(corpus_index))
    model = fake_model.client() if with_model else None
    slack_http = slack_http_session()
    pacer = UNPACED() if pacer is None else pacer
    try:
        async with open_folio(
            settings,
            Given(
                model=model,
                retriever=retriever,
                store=store,
                slack=slack_client(settings, slack_http, pacer=pacer),
                policy=None if policy_file else channel_policy or ChannelPolicy.model_validate(policy or POLICY),
                clock=clock,
            ),
            serving=True,
        ) as opened:
            folio = serving(opened)  # the one build_app serves (its consumer, its services)
            runner = web.AppRunner(web_app(build_app(folio)))
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = runner.addresses[0][1]
            try:
                async with aiohttp.ClientSession() as http:
                    url = f"http://127.0.0.1:{port}{EVENTS_PATH}"
                    yield Harness(url, slack, fake_model, store, folio.tasks, retriever, http, folio=folio)
            finally:
                await folio.consumer.stop()
                await folio.tasks.drain()
                await runner.cleanup()
    finally:
        await slack_http.close()
        if model is not None:
            await model.close()
        await store.close()
        await retriever.inner.close()  # type: ignore[attr-defined]


@pytest.fixture
async def harness(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> AsyncIterator[Harness]:
    async with running_app(slack, fake_model, redis_url, corpus_index) as running:
        yield running


@pytest.fixture(scope="session")
def access_index(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    """A local index with two containers: `finance` (the shipped sample corpus: refund policies, supplier contracts,
    expenses) and `handbook` (../shared/corpus/employee_handbook.pdf). Read only; the session shares it."""
    import asyncio

    from bot.app.sample import SAMPLE_CORPUS
    from bot.ingest import IndexOptions, index_files

    path = tmp_path_factory.mktemp("access_index") / "index.sqlite"

    async def build() -> None:
        retriever = LocalRetriever(path)
        try:
            finance = await index_files(
                sorted(SAMPLE_CORPUS.glob("*.pdf")), retriever, IndexOptions(container="finance")
            )
            handbook = await index_files(
                [shared_dir / "corpus" / "employee_handbook.pdf"], retriever, IndexOptions(container="handbook")
            )
        finally:
            await retriever.close()
        assert not finance.failed and not handbook.failed

    asyncio.run(build())
    return path
