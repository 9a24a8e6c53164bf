"""The Azure AI Search backend, driven through the real async SDK against the fake service over HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest
from azure.core.credentials import AzureKeyCredential

from bot.errors import InvalidInput, SearchUnavailable
from bot.ingest import IndexOptions, index_files
from bot.ingest.lifecycle import remove_files
from bot.models import Scope, Tag
from bot.retrieval import IndexWriter, Retriever
from bot.retrieval.azure import AzureSearchRetriever
from tests.fakes.azure_search import FakeAzureSearch
from tests.retrieval.helpers import API_KEY, HashEmbedder, chunk, fingerprints

HOSTILE = [
    "' or 1 eq 1 or '",
    'O\'Brien, "quoted", with commas',
    "finance') or (container eq 'other",
    "Zürich – 東京 ✓",
    "x' or tags/any(t: t ne 'x') or 'a' eq 'a",
]


async def put(index: AzureSearchRetriever, *chunks) -> None:  # type: ignore[no-untyped-def]
    by_file: dict[tuple[str, str], list] = {}
    for item in chunks:
        by_file.setdefault((item.container, item.file), []).append(item)
    for (container, file), items in by_file.items():
        await index.replace_file(container, file, "v1", items)


async def test_the_first_write_creates_the_index_schema(
    azure: AzureSearchRetriever, fake_search: FakeAzureSearch
) -> None:
    assert isinstance(azure, Retriever) and isinstance(azure, IndexWriter)
    await put(azure, chunk("c", "a.pdf", "hello"))
    index = fake_search.indexes["folio"]
    fields = {field["name"]: field for field in index["fields"]}
    assert fields["id"]["key"] and fields["container"]["filterable"] and fields["tags"]["filterable"]
    assert fields["tags"]["type"] == "Collection(Edm.String)"
    assert fields["content"]["searchable"] and fields["title"]["searchable"]
    assert {"page", "doc_date", "file", "tabular", "context"} <= set(fields)
    assert fields["vector"]["dimensions"] == 32
    [profile] = index["vectorSearch"]["profiles"]
    assert index["vectorSearch"]["algorithms"][0]["kind"] == "hnsw"
    [vectorizer] = index["vectorSearch"]["vectorizers"]
    assert vectorizer["kind"] == "azureOpenAI" and profile["vectorizer"] == vectorizer["name"]
    assert vectorizer["azureOpenAIParameters"]["deploymentId"] == "text-embedding-3-small"
    assert index["semantic"]["configurations"][0]["prioritizedFields"]["titleField"]["fieldName"] == "title"


async def test_hybrid_semantic_search_returns_pages_of_the_container(
    azure: AzureSearchRetriever, fake_search: FakeAzureSearch
) -> None:
    await put(
        azure,
        chunk("benefits", "plan.pdf", "hearing aids are covered every three years", page=30),
        chunk("benefits", "plan.pdf", "dental cleanings twice a year", page=12),
        chunk("other", "secret.pdf", "hearing aids hearing aids hearing aids", page=1),
    )
    results = await azure.search("hearing aids", Scope(container="benefits"), top=5)
    assert results[0].file == "plan.pdf" and results[0].page == 30
    assert all(hit.container == "benefits" for hit in results)
    body = fake_search.searches()[-1].body
    assert body["filter"] == "container eq 'benefits'"
    assert body["queryType"] == "semantic" and body["semanticConfiguration"] == "folio-semantic"
    assert body["vectorQueries"] == [{"kind": "text", "text": "hearing aids", "k": 50, "fields": "vector"}]
    assert results[0].score == 4.0  # the reranker score (0-4), not the RRF fusion score


async def test_the_score_gap_cuts_on_the_reranker_score(fake_search: FakeAzureSearch) -> None:
    retriever = AzureSearchRetriever(
        endpoint=fake_search.endpoint, index_name="folio", credential=AzureKeyCredential(API_KEY), score_gap=0.6
    )
    await put(
        retriever,
        chunk("c", "full.pdf", "annual leave carry over rules"),
        chunk("c", "half.pdf", "annual report"),
    )
    results = await retriever.search("annual leave carry over", Scope(container="c"), top=5)
    await retriever.close()
    assert [hit.file for hit in results] == ["full.pdf"]


async def test_a_client_side_embedder_sends_the_vector_itself(fake_search: FakeAzureSearch) -> None:
    retriever = AzureSearchRetriever(
        endpoint=fake_search.endpoint,
        index_name="folio",
        credential=AzureKeyCredential(API_KEY),
        semantic=False,
        embedder=HashEmbedder(),
    )
    await put(retriever, chunk("c", "a.pdf", "parental leave"), chunk("c", "b.pdf", "expense claims"))
    results = await retriever.search("parental leave", Scope(container="c"), top=5)
    await retriever.close()
    [query] = fake_search.searches()[-1].body["vectorQueries"]
    assert query["kind"] == "vector" and len(query["vector"]) == 32 and query["k"] == 50
    assert "queryType" not in fake_search.searches()[-1].body
    assert results[0].file == "a.pdf"


async def test_tags_or_within_a_key_and_across_keys(azure: AzureSearchRetriever, fake_search: FakeAzureSearch) -> None:
    await put(
        azure,
        chunk("c", "a.pdf", "travel policy", tags=("year:2025", "department:hr")),
        chunk("c", "b.pdf", "travel policy", tags=("year:2026", "department:hr")),
        chunk("c", "c.pdf", "travel policy", tags=("year:2026", "department:finance")),
        chunk("c", "d.pdf", "travel policy", tags=("year:2024", "department:hr")),
    )
    tags = (Tag(key="year", value="2025"), Tag(key="year", value="2026"), Tag(key="department", value="hr"))
    results = await azure.search("travel policy", Scope(container="c", tags=tags), top=10)
    assert sorted(hit.file for hit in results) == ["a.pdf", "b.pdf"]
    assert fake_search.searches()[-1].body["filter"] == (
        "container eq 'c' and (tags/any(t: t eq 'year:2025') or tags/any(t: t eq 'year:2026'))"
        " and tags/any(t: t eq 'department:hr')"
    )


@pytest.mark.parametrize("value", HOSTILE)
async def test_hostile_tag_values_are_escaped_and_never_widen_the_search(
    azure: AzureSearchRetriever, fake_search: FakeAzureSearch, value: str
) -> None:
    await put(
        azure,
        chunk("c", "tagged.pdf", "budget report", tags=(f"team:{value}",)),
        chunk("c", "other.pdf", "budget report", tags=("team:ops",)),
        chunk("elsewhere", "secret.pdf", "budget report", tags=(f"team:{value}",)),
    )
    results = await azure.search("budget", Scope(container="c", tags=(Tag(key="team", value=value),)), top=10)
    assert [(hit.container, hit.file) for hit in results] == [("c", "tagged.pdf")]
    assert fake_search.searches()[-1].body["filter"].startswith("container eq 'c' and ")


@pytest.mark.parametrize("container", HOSTILE)
async def test_a_hostile_container_name_is_one_literal(
    azure: AzureSearchRetriever, fake_search: FakeAzureSearch, container: str
) -> None:
    await put(azure, chunk("c", "a.pdf", "budget report"), chunk(container, "b.pdf", "budget report"))
    results = await azure.search("budget", Scope(container=container), top=10)
    assert [(hit.container, hit.file) for hit in results] == [(container.strip(), "b.pdf")]


async def test_unknown_container_and_tag_key_find_nothing(azure: AzureSearchRetriever) -> None:
    await put(azure, chunk("c", "a.pdf", "budget report", tags=("team:ops",)))
    assert await azure.search("budget", Scope(container="nope"), top=5) == []
    assert await azure.search("budget", Scope(container="c", tags=(Tag(key="colour", value="red"),)), top=5) == []
    assert await azure.count("nope") == 0


async def test_empty_query_and_malformed_tag_key_are_refused_before_any_request(
    azure: AzureSearchRetriever, fake_search: FakeAzureSearch
) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        await azure.search("  ", Scope(container="c"), top=5)
    with pytest.raises(InvalidInput, match="tag key"):
        await azure.search("x", Scope(container="c", tags=(Tag(key="a' or 'b", value="x"),)), top=5)
    assert fake_search.searches() == []


async def test_replacing_a_file_removes_chunks_the_new_version_lacks(azure: AzureSearchRetriever) -> None:
    old = [chunk("c", "a.pdf", f"old page {n} pensions", page=n) for n in range(1, 4)]
    await azure.replace_file("c", "a.pdf", "v1", old)
    await azure.replace_file("c", "a.pdf", "v2", [chunk("c", "a.pdf", "new page retirement", page=1)])
    assert await azure.count("c") == 1
    assert await fingerprints(azure, "c") == {"a.pdf": "v2"}
    hits = await azure.search("pensions", Scope(container="c"), top=5)  # hybrid: the vector side always answers
    assert [hit.text for hit in hits] == ["new page retirement"]
    await azure.delete_file("c", "a.pdf")
    assert await azure.count("c") == 0 and await fingerprints(azure, "c") == {}


async def test_files_beyond_the_first_result_page_are_listed_and_deleted(
    azure: AzureSearchRetriever, fake_search: FakeAzureSearch
) -> None:
    await azure.replace_file("c", "big.pdf", "v1", [chunk("c", "big.pdf", f"row {n}", page=n) for n in range(1, 1102)])
    await azure.replace_file("c", "small.pdf", "v7", [chunk("c", "small.pdf", "last")])
    assert await fingerprints(azure, "c") == {"big.pdf": "v1", "small.pdf": "v7"}  # small.pdf is on page 2
    await azure.delete_file("c", "big.pdf")
    assert await azure.count("c") == 1


async def test_a_wrong_key_is_a_clear_error(fake_search: FakeAzureSearch) -> None:
    retriever = AzureSearchRetriever(
        endpoint=fake_search.endpoint, index_name="folio", credential=AzureKeyCredential("wrong")
    )
    with pytest.raises(SearchUnavailable, match="AZURE_SEARCH_KEY"):
        await retriever.search("x", Scope(container="c"), top=5)
    await retriever.close()


async def test_pdfs_are_ingested_through_the_azure_backend(azure: AzureSearchRetriever, shared_dir: Path) -> None:
    pdf = shared_dir / "corpus" / "PerksPlus.pdf"
    report = await index_files([pdf], azure, IndexOptions(container="benefits", tags=(Tag(key="year", value="2023"),)))
    assert report.files == 1 and report.chunks > 0
    again = await index_files([pdf], azure, IndexOptions(container="benefits", tags=(Tag(key="year", value="2023"),)))
    assert again.unchanged == 1 and again.files == 0
    results = await azure.search("gym membership", Scope(container="benefits"), top=3)
    assert results and results[0].file == "PerksPlus.pdf" and results[0].page is not None
    assert results[0].tags == (Tag(key="year", value="2023"),)


async def test_a_files_passages_come_back_whole_in_reading_order(azure: AzureSearchRetriever, shared_dir: Path) -> None:
    pdf = shared_dir / "corpus" / "PerksPlus.pdf"
    report = await index_files([pdf], azure, IndexOptions(container="benefits"))

    passages = await azure.passages("benefits", "PerksPlus.pdf")

    assert len(passages) == report.chunks and {chunk.file for chunk in passages} == {"PerksPlus.pdf"}
    assert [chunk.page for chunk in passages] == sorted(chunk.page or 0 for chunk in passages)
    assert passages[0].page == 1 and await azure.passages("benefits", "nothing.pdf") == []


async def test_files_and_containers_are_listed_and_a_removal_deletes_by_the_file_filter(
    azure: AzureSearchRetriever, fake_search: FakeAzureSearch
) -> None:
    await azure.replace_file(
        "c",
        "a.pdf",
        "v1",
        [chunk("c", "a.pdf", f"alpha {n}", page=n, tags=("year:2025",)) for n in (1, 2)],
        source="/docs/a.pdf",
        pages=2,
    )
    await azure.replace_file("c", "b's.md", "v1", [chunk("c", "b's.md", "beta", page=None)], source="/docs/b's.md")
    await azure.replace_file("other", "x.pdf", "v1", [chunk("other", "x.pdf", "gamma")])
    assert await azure.containers() == {"c": 3, "other": 1}
    listing = await azure.files("c")
    assert [(f.file, f.pages, f.passages, f.source) for f in listing] == [
        ("a.pdf", 2, 2, "/docs/a.pdf"),
        ("b's.md", None, 1, "/docs/b's.md"),
    ]
    assert listing[0].tags == (Tag(key="year", value="2025"),) and listing[0].indexed_at
    await remove_files(azure, None, [listing[1]])
    assert fake_search.searches()[-1].body["filter"] == "container eq 'c' and file eq 'b''s.md'"
    assert [f.file for f in await azure.files("c")] == ["a.pdf"]
    assert await azure.containers() == {"c": 2, "other": 1}
    assert {hit.file for hit in await azure.search("beta", Scope(container="c"), top=5)} <= {"a.pdf"}


async def test_an_index_that_does_not_exist_yet_lists_nothing(azure: AzureSearchRetriever) -> None:
    assert await azure.containers() == {}
