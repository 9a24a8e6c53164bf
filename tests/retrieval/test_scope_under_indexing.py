"""Issue 9.1: no search path returns another container's passage, even while another process re-indexes.

A serving LocalRetriever caches each container's row ids and vectors; `folio index` in another process (here a
second LocalRetriever on the same file) re-indexes a file into fewer passages, removes one, and indexes another
container. Searching `public` must then return 0 `secret` rows: keyword, vector-only hits fetched by row id, fused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.errors import InvalidInput
from bot.models import Chunk, Scope
from bot.retrieval import SearchIndex
from bot.retrieval.azure import AzureSearchRetriever
from bot.retrieval.embedders import OpenAIEmbedder
from bot.retrieval.local import LocalRetriever
from tests.fakes.openai_embeddings import FakeEmbeddings
from tests.retrieval.helpers import chunk

PUBLIC = Scope(container="public")
QUERIES = ["annual leave days holiday", "holiday carry over", "salary bands", "leave"]


def passages(container: str, file: str, count: int, words: str) -> list[Chunk]:
    return [chunk(container, file, f"{words} paragraph {n}", page=n) for n in range(1, count + 1)]


@pytest.fixture
def embeddings() -> Iterator[FakeEmbeddings]:
    with FakeEmbeddings() as fake:
        yield fake
        assert fake.problems == []


def openai_embedder(fake: FakeEmbeddings) -> OpenAIEmbedder:
    return OpenAIEmbedder(fake.client(), model="text-embedding-3-small", dimensions=32)


@pytest.fixture(params=["embeddings", "keywords only"])
async def pair(
    request: pytest.FixtureRequest, tmp_path: Path, embeddings: FakeEmbeddings
) -> AsyncIterator[tuple[LocalRetriever, LocalRetriever]]:
    """(serving, indexer): two retrievers on one index file, as `folio serve` and `folio index` would hold it."""
    path = tmp_path / "index.sqlite"
    embedder = openai_embedder(embeddings) if request.param == "embeddings" else None
    serving = LocalRetriever(path, embedder=embedder, score_gap=0.0)
    indexer = LocalRetriever(path, embedder=embedder, score_gap=0.0)
    yield serving, indexer
    await serving.close()
    await indexer.close()


async def reindex_while_serving(serving: SearchIndex, indexer: SearchIndex) -> None:
    """Index `public`, search it (the serving side caches), then change the index from the other side."""
    handbook = passages("public", "handbook.pdf", 8, "annual leave days holiday carry over")
    await indexer.replace_file("public", "handbook.pdf", "v1", handbook)
    await indexer.replace_file("public", "old.pdf", "v1", passages("public", "old.pdf", 3, "holiday leave old rules"))
    for query in QUERIES:
        await serving.search(query, PUBLIC, top=10)
    await indexer.delete_file("public", "old.pdf")
    fewer = passages("public", "handbook.pdf", 2, "annual leave days")
    await indexer.replace_file("public", "handbook.pdf", "v2", fewer)  # fewer passages: the top ids are free
    secret = passages("secret", "salaries.pdf", 12, "salary bands annual leave days holiday carry over secret")
    await indexer.replace_file("secret", "salaries.pdf", "v1", secret)


async def test_a_concurrent_indexer_never_makes_a_search_return_another_containers_rows(
    pair: tuple[LocalRetriever, LocalRetriever],
) -> None:
    serving, indexer = pair
    await reindex_while_serving(serving, indexer)
    found = [hit for query in QUERIES for hit in await serving.search(query, PUBLIC, top=10)]
    assert found, "the public passages must still be found"
    assert [hit for hit in found if hit.container != "public"] == []
    assert {hit.file for hit in found} == {"handbook.pdf"}  # old.pdf was removed, and handbook.pdf re-indexed
    assert {hit.page for hit in found} <= {1, 2}


async def test_the_azure_backend_returns_only_its_scope_after_the_same_changes(
    azure: AzureSearchRetriever,
) -> None:
    await reindex_while_serving(azure, azure)
    found = [hit for query in QUERIES for hit in await azure.search(query, PUBLIC, top=10)]
    assert found and [hit for hit in found if hit.container != "public"] == []
    assert {hit.file for hit in found} == {"handbook.pdf"}


async def test_a_search_without_a_container_is_refused(
    pair: tuple[LocalRetriever, LocalRetriever], azure: AzureSearchRetriever
) -> None:
    serving, _ = pair
    unscoped = Scope.model_construct(containers=(), tags=())  # bypasses validation, as a bug upstream might
    for backend in (serving, azure):
        with pytest.raises(InvalidInput, match="at least one container"):
            await backend.search("leave", unscoped, top=5)


async def test_both_backends_say_which_files_a_thread_cited_are_still_indexed(
    pair: tuple[LocalRetriever, LocalRetriever], azure: AzureSearchRetriever
) -> None:
    serving, indexer = pair
    for backend, writer in ((serving, indexer), (azure, azure)):
        await reindex_while_serving(backend, writer)
        cited = [("public", "handbook.pdf"), ("public", "old.pdf"), ("secret", "salaries.pdf"), ("secret", "x.pdf")]
        assert await backend.still_indexed(cited) == {("public", "handbook.pdf"), ("secret", "salaries.pdf")}
        assert await backend.still_indexed([]) == set()


async def test_both_backends_give_back_the_text_they_hold_now_for_passages_a_thread_was_shown(
    pair: tuple[LocalRetriever, LocalRetriever], azure: AzureSearchRetriever
) -> None:
    serving, indexer = pair
    for backend, writer in ((serving, indexer), (azure, azure)):
        before = passages("public", "handbook.pdf", 3, "annual leave days") + passages("secret", "x.pdf", 1, "pay")
        await writer.replace_file("public", "handbook.pdf", "v1", before[:3])
        await writer.replace_file("secret", "x.pdf", "v1", before[3:])
        shown = [before[0], before[2], before[3]]  # pages 1 and 3 of the handbook, and x.pdf's page
        after = passages("public", "handbook.pdf", 2, "annual leave days")  # page 3 gone, same ids for 1 and 2
        after[0] = after[0].model_copy(update={"text": "annual leave is agreed per contract"})
        await writer.replace_file("public", "handbook.pdf", "v2", after)
        await writer.delete_file("secret", "x.pdf")

        held = await backend.passage_texts(shown)

        assert held == {before[0].id: "annual leave is agreed per contract"}  # the one still there, as it is now
        assert await backend.passage_texts([]) == {}
