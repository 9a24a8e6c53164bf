"""Fixtures for retrieval tests: the fake Azure AI Search service and the Azure backend pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from azure.core.credentials import AzureKeyCredential

from bot.retrieval.azure import AzureSearchRetriever, AzureVectorizer
from tests.fakes.azure_search import FakeAzureSearch
from tests.retrieval.helpers import API_KEY, DIMENSIONS, HashEmbedder


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
