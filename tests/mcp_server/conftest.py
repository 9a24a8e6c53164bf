"""`folio serve` with FOLIO_MCP=true on 127.0.0.1, its Slack, model and identity provider faked, its index holding
two containers: `finance` (the sample corpus) and `handbook` (the shared employee handbook).

People: Ana (ana@example.com, in the finance-team group: finance and handbook), Ben (ben@example.com: handbook, the
default) and Gus (gus@partner.example, a person of another organisation, Slack Connect).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
import redis
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bot.cli.serve import ServeHooks, serve
from bot.config import load_settings
from tests.fakes.jwks import FakeIdentityProvider
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import PARTNER, FakeSlack
from tests.slack.harness import SECRET, wait_until

ANA, BEN, GUS = "U0ANA0001", "U0BEN0001", "U0GUS0001"
EMAILS = {"ana@example.com": ANA, "ben@example.com": BEN, "gus@partner.example": GUS}
POLICY = """\
tag_keys: [department, year]
channels:
  C0FINANCE1:
    container: finance
access:
  groups:
    finance-team: [finance]
  default: [handbook]
"""


@pytest.fixture(scope="session")
def indexed_data(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    """A data folder whose index and kept copies hold `finance` and `handbook` (copied per test: serve writes)."""
    from bot.app.builders import documents_folder
    from bot.app.sample import SAMPLE_CORPUS
    from bot.documents import DocumentStore
    from bot.ingest import IndexOptions, index_files
    from bot.retrieval.local import LocalRetriever

    data = tmp_path_factory.mktemp("mcp_data")

    async def build() -> None:
        retriever = LocalRetriever(data / "index.sqlite")
        documents = DocumentStore(documents_folder(data))
        try:
            finance = await index_files(
                sorted(SAMPLE_CORPUS.glob("*.pdf")), retriever, IndexOptions(container="finance", documents=documents)
            )
            handbook = await index_files(
                [shared_dir / "corpus" / "employee_handbook.pdf"],
                retriever,
                IndexOptions(container="handbook", documents=documents),
            )
        finally:
            await retriever.close()
        assert not finance.failed and not handbook.failed

    asyncio.run(build())
    return data


@pytest.fixture
def idp() -> Iterator[FakeIdentityProvider]:
    with FakeIdentityProvider() as fake:
        yield fake


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.emails.update(EMAILS)
        fake.add_user(GUS, team=PARTNER)
        fake.add_usergroup("S0FIN0001", "finance-team", [ANA])
        yield fake


@pytest.fixture
def fake_model() -> Iterator[FakeResponses]:
    with FakeResponses() as fake:
        yield fake
        assert fake.problems == []


@pytest.fixture
def environment(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    indexed_data: Path,
    slack: FakeSlack,
    fake_model: FakeResponses,
    idp: FakeIdentityProvider,
    redis_url: str,
) -> Path:
    """The settings of a Folio serving agents, in the environment; returns the data folder. The session's Redis
    forgets what Slack said in earlier tests (`folio serve` keeps its caches under the fixed prefix `folio`)."""
    with redis.Redis.from_url(redis_url) as client:
        for key in client.scan_iter("folio:access:*"):
            client.delete(key)
    data = tmp_path / "data"
    shutil.copytree(indexed_data, data)
    (tmp_path / "channels.yaml").write_text(POLICY)
    for name, value in {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "OPENAI_API_KEY": "sk-fake",
        "OPENAI_BASE_URL": fake_model.base_url,
        "FOLIO_CODE_INTERPRETER": "false",
        "REDIS_URL": redis_url,
        "FOLIO_DATA_DIR": str(data),
        "FOLIO_SAMPLE_CORPUS": "false",
        "FOLIO_PUBLIC_URL": "http://127.0.0.1:8080",
        "FOLIO_LINK_SECRET": "test-link-secret",
        "FOLIO_MCP": "true",
        "FOLIO_OIDC_ISSUER": idp.issuer,
        "FOLIO_OIDC_AUDIENCE": idp.audience,
        "FOLIO_OIDC_JWKS_URL": idp.jwks_url,
    }.items():
        monkeypatch.setenv(name, value)
    return data


@dataclass(frozen=True)
class Served:
    """A running `folio serve`: its port and the URL agents use."""

    port: int

    @property
    def mcp(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@asynccontextmanager
async def serving() -> AsyncIterator[Served]:
    """`folio serve` (HTTP mode) from the environment, on a free port, until the block ends."""
    stop, ports = asyncio.Event(), []
    server = asyncio.create_task(
        serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=stop, started=ports.append))
    )
    await wait_until(lambda: ports or server.done())
    if server.done():
        server.result()  # raises what stopped it
    try:
        yield Served(ports[0])
    finally:
        stop.set()
        assert await server == 0


@asynccontextmanager
async def agent(url: str, token: str | None, *, mode: str = "auto") -> AsyncIterator[Client]:
    """The official MCP client over Streamable HTTP, sending `token` as its bearer token; `mode` "legacy": the
    initialize handshake of protocol versions before 2026 (a session id, which a stateful server would pin)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
            yield client
