"""Set-up the source tests share: settings that point at a sources file, a real Redis, no sample corpus."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.models import Chunk, Scope
from bot.retrieval.local import LocalRetriever


@pytest.fixture
def sync_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, redis_url: str) -> Path:
    """The folder a test writes its sources file into (the working folder); Folio's data stays in ./.folio."""
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("FOLIO_SAMPLE_CORPUS", "false")
    monkeypatch.setenv("FOLIO_SOURCES", str(tmp_path / "sources.yaml"))
    return tmp_path


def write_sources(folder: Path, text: str) -> Path:
    path = folder / "sources.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def search(query: str, scope: Scope) -> list[Chunk]:
    """What the index in ./.folio finds for `query` in `scope` (opened and closed for this search)."""

    async def go() -> list[Chunk]:
        settings = load_settings(None)
        index = LocalRetriever(settings.folio_data_dir / "index.sqlite")
        try:
            return await index.search(query, scope, top=10)
        finally:
            await index.close()

    return asyncio.run(go())


def indexed(container: str) -> dict[str, tuple[str, ...]]:
    """Document name -> its tags (as `key:value`), for every document of `container` in ./.folio's index."""

    async def go() -> dict[str, tuple[str, ...]]:
        settings = load_settings(None)
        index = LocalRetriever(settings.folio_data_dir / "index.sqlite")
        try:
            return {held.file: tuple(map(str, held.tags)) for held in await index.files(container)}
        finally:
            await index.close()

    return asyncio.run(go())
