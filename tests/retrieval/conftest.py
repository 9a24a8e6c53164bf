"""Fixtures for retrieval tests: the fake Azure AI Search service, and an embedder that needs no network."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator, Sequence

import numpy as np
import pytest
from azure.core.credentials import AzureKeyCredential

from bot.models import Chunk, Tag
from bot.retrieval.azure import AzureSearchRetriever, AzureVectorizer
from tests.fakes.azure_search import FakeAzureSearch, fake_embedding

API_KEY = "test-admin-key"
DIMENSIONS = 32


class HashEmbedder:
    """An Embedder without a model: the same hashed bag of words the fake's vectorizer uses."""

    dimensions = DIMENSIONS

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([fake_embedding(text, self.dimensions) for text in texts], dtype=np.float32).reshape(
            len(texts), self.dimensions
        )


def chunk(container: str, file: str, text: str, *, page: int | None = 1, tags: tuple[str, ...] = ()) -> Chunk:
    """A chunk as ingestion would make it (id unique per container, file, page and text)."""
    return Chunk(
        id=hashlib.sha1(f"{container}|{file}|{page}|{text}".encode()).hexdigest()[:24],
        file=file,
        page=page,
        container=container,
        tags=tuple(Tag.parse(tag) for tag in tags),
        text=text,
        context=file,
    )


@pytest.fixture
def fake_search() -> Iterator[FakeAzureSearch]:
    with FakeAzureSearch(api_key=API_KEY) as fake:
        yield fake


@pytest.fixture
async def azure(fake_search: FakeAzureSearch) -> AsyncIterator[AzureSearchRetriever]:
    """The Azure backend against the fake: hybrid with the service-side vectorizer, semantic ranker on, no gap."""
    retriever = AzureSearchRetriever(
        endpoint=fake_search.endpoint,
        index_name="folio",
        credential=AzureKeyCredential(API_KEY),
        semantic=True,
        score_gap=0.0,
        embedder=HashEmbedder(),
        vectorizer=AzureVectorizer("https://example.openai.azure.com", "text-embedding-3-small", DIMENSIONS, "k"),
    )
    yield retriever
    await retriever.close()
