"""Azure AI Search backend: hybrid query (text + vector), semantic ranker, filters from `filters.scope_filter`.

Hybrid `@search.score` is a reciprocal-rank-fusion score (about 0.016 to 0.033) that says little about how good a hit
is, so the score-gap cutoff uses `@search.reranker_score` (0 to 4) when the semantic ranker ran, and the plain BM25
score of a keyword-only query otherwise; a hybrid query without the ranker keeps its top hits uncut.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

from azure.core.credentials import AzureKeyCredential
from azure.core.credentials_async import AsyncTokenCredential
from azure.core.exceptions import AzureError, HttpResponseError, ResourceNotFoundError
from azure.search.documents.aio import SearchClient
from azure.search.documents.indexes.aio import SearchIndexClient
from azure.search.documents.models import VectorizableTextQuery, VectorizedQuery, VectorQuery

from bot.errors import SearchUnavailable
from bot.models import Chunk, Scope, file_title, utc_now
from bot.retrieval import IndexedFile, apply_score_gap, check_scope, check_top, clean_query, reading_order, within
from bot.retrieval.azure_schema import (
    FILE_FIELDS,
    RETURNED,
    SEMANTIC_CONFIG,
    VECTOR_FIELD,
    AzureVectorizer,
    FileFields,
    file_listing,
    index_definition,
    tags_of,
)
from bot.retrieval.embedders import Embedder
from bot.retrieval.filters import file_filter, one_of, passage_filters, scope_filter, tag_term

CANDIDATES = 50  # nearest neighbours per vector query; the semantic ranker also reranks the top 50
BATCH = 500  # documents per upload request (the service takes up to 1000 or 16 MB)
MAX_CONTAINERS = 1000  # facet buckets asked for: more containers than this in one index are not listed


class AzureSearchRetriever:
    """Retriever and IndexWriter over one Azure AI Search index (created on first write)."""

    def __init__(
        self,
        *,
        endpoint: str,
        index_name: str,
        credential: AzureKeyCredential | AsyncTokenCredential,
        semantic: bool = True,
        score_gap: float = 0.5,
        embedder: Embedder | None = None,
        vectorizer: AzureVectorizer | None = None,
    ) -> None:
        self.index_name = index_name
        self.semantic = semantic
        self.score_gap = score_gap
        self.embedder = embedder
        self.vectorizer = vectorizer
        self.search_client = SearchClient(endpoint, index_name, credential)
        self.index_client = SearchIndexClient(endpoint, credential)
        self._index_ready = False

    async def close(self) -> None:
        """Close both HTTP sessions."""
        await self.search_client.close()
        await self.index_client.close()

    # --- Retriever -----------------------------------------------------------------------------------------------
    async def search(self, query: str, scope: Scope, *, top: int) -> list[Chunk]:
        """Hybrid search inside the scope's filter; the semantic ranker reorders when enabled."""
        text = clean_query(query)
        check_scope(scope)
        check_top(top)
        options: dict[str, Any] = {"filter": scope_filter(scope), "top": top, "select": RETURNED}
        vectors = await self._vector_queries(text)
        if vectors:
            options["vector_queries"] = vectors
        if self.semantic:
            options["query_type"] = "semantic"
            options["semantic_configuration_name"] = SEMANTIC_CONFIG
        hits = [document async for document in self._documents(text, **options)]
        chunks = [_chunk(hit, _score(hit)) for hit in hits]
        if any(hit.get("@search.reranker_score") is not None for hit in hits) or not vectors:
            chunks = apply_score_gap(chunks, self.score_gap)
        return within(scope, chunks[:top])

    async def _vector_queries(self, text: str) -> list[VectorQuery]:
        if self.vectorizer:
            # The service embeds the text with the index's Azure OpenAI vectorizer: one round trip fewer.
            return [VectorizableTextQuery(text=text, k_nearest_neighbors=CANDIDATES, fields=VECTOR_FIELD)]
        if self.embedder:
            vector = (await self.embedder.embed([text], query=True))[0]
            values = [float(x) for x in vector]
            return [VectorizedQuery(vector=values, k_nearest_neighbors=CANDIDATES, fields=VECTOR_FIELD)]
        return []

    # --- IndexWriter ---------------------------------------------------------------------------------------------
    async def files(self, container: str) -> list[IndexedFile]:
        """Every file of `container`, by name, gathered from its chunks. A listing changes nothing: a missing index
        lists no files, and an index made before a field existed is listed without it (indexing brings it up to date)."""
        try:
            held = {field.name for field in (await self.index_client.get_index(self.index_name)).fields}
        except ResourceNotFoundError:
            return []
        except AzureError as exc:
            raise _unavailable(exc) from exc
        select = [name for name in FILE_FIELDS if name in held]
        documents = self._all_documents(filter=scope_filter(Scope(containers=(container,))), select=select)
        return file_listing(container, [document async for document in documents])

    async def passages(self, container: str, file: str) -> list[Chunk]:
        """Every passage of one file in reading order (chunk ids end in `-p<page>-<position>`)."""
        documents = self._all_documents(filter=file_filter(container, file), select=RETURNED)
        return sorted([_chunk(document, 0.0) async for document in documents], key=reading_order)

    async def containers(self) -> dict[str, int]:
        """Container -> passages, from the `container` facet (empty when the index does not exist yet)."""
        try:
            results = await self.search_client.search(
                search_text="*", facets=[f"container,count:{MAX_CONTAINERS}"], top=0
            )
            facets = await results.get_facets() or {}
        except ResourceNotFoundError:
            return {}
        except AzureError as exc:
            raise _unavailable(exc) from exc
        counts = {str(facet["value"]): int(facet["count"]) for facet in facets.get("container") or ()}
        return dict(sorted(counts.items()))

    async def still_indexed(self, files: Collection[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of these (container, file) pairs still have passages: one facet query per container."""
        by_container: dict[str, list[str]] = {}
        for container, file in dict.fromkeys(files):
            by_container.setdefault(container, []).append(file)
        held: set[tuple[str, str]] = set()
        for container, names in by_container.items():
            where = f"{scope_filter(Scope(containers=(container,)))} and {one_of('file', tuple(names))}"
            try:
                results = await self.search_client.search(
                    search_text="*", filter=where, facets=[f"file,count:{len(names)}"], top=0
                )
                facets = await results.get_facets() or {}
            except ResourceNotFoundError:
                return set()
            except AzureError as exc:
                raise _unavailable(exc) from exc
            held.update((container, str(facet["value"])) for facet in facets.get("file") or ())
        return held

    async def passage_texts(self, shown: Collection[Chunk]) -> dict[str, str]:
        """The text the index holds now under each of these passages' ids (absent: no longer held): one query per
        container, narrowed to the files and pages shown (the key field is not filterable)."""
        wanted = {chunk.id for chunk in shown}
        texts: dict[str, str] = {}
        for where in passage_filters(shown).values():
            documents = self._all_documents(filter=where, select=["id", "content"])
            texts.update({doc["id"]: str(doc.get("content") or "") async for doc in documents if doc["id"] in wanted})
        return texts

    async def count(self, container: str) -> int:
        """How many chunks `container` holds (0 when the index does not exist yet)."""
        try:
            results = await self.search_client.search(
                search_text="*", filter=scope_filter(Scope(containers=(container,))), top=0, include_total_count=True
            )
            return int(await results.get_count() or 0)
        except ResourceNotFoundError:
            return 0
        except AzureError as exc:
            raise _unavailable(exc) from exc

    async def replace_file(
        self,
        container: str,
        file: str,
        fingerprint: str,
        chunks: Sequence[Chunk],
        *,
        source: str | None = None,
        pages: int | None = None,
    ) -> None:
        """Upload the new chunks of `file`, then delete the ones the new version no longer has."""
        await self._ensure_index()
        old = {doc["id"] async for doc in self._all_documents(filter=file_filter(container, file), select=["id"])}
        vectors = await self._embed(chunks)
        held = FileFields(fingerprint=fingerprint, source=source, pages=pages, indexed_at=utc_now())
        documents = [_document(chunk, held, None if vectors is None else vectors[i]) for i, chunk in enumerate(chunks)]
        for start in range(0, len(documents), BATCH):
            await self._write("upload", documents[start : start + BATCH])
        stale = sorted(old - {chunk.id for chunk in chunks})
        await self._delete_ids(stale)

    async def delete_file(self, container: str, file: str) -> None:
        """Remove every chunk of `file` from `container`: the ids the file filter finds, deleted in batches."""
        ids = [doc["id"] async for doc in self._all_documents(filter=file_filter(container, file), select=["id"])]
        await self._delete_ids(ids)

    async def compact(self) -> None:
        """Nothing to do: the service merges its own index segments."""

    # --- plumbing ------------------------------------------------------------------------------------------------
    async def _ensure_index(self) -> None:
        if self._index_ready:
            return
        dimensions = self.embedder.dimensions if self.embedder else None
        definition = index_definition(self.index_name, dimensions=dimensions, vectorizer=self.vectorizer)
        try:
            await self.index_client.create_or_update_index(definition)
        except AzureError as exc:
            raise _unavailable(exc) from exc
        self._index_ready = True

    async def _embed(self, chunks: Sequence[Chunk]) -> Any:
        if self.embedder is None or not chunks:
            return None
        return await self.embedder.embed([f"{chunk.context}\n{chunk.text}" for chunk in chunks])

    async def _delete_ids(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), BATCH):
            await self._write("delete", [{"id": key} for key in ids[start : start + BATCH]])

    async def _write(self, action: str, documents: list[dict[str, Any]]) -> None:
        if not documents:
            return
        try:
            if action == "upload":
                results = await self.search_client.upload_documents(documents=documents)
            else:
                results = await self.search_client.delete_documents(documents=documents)
        except AzureError as exc:
            raise _unavailable(exc) from exc
        failed = [result for result in results if not result.succeeded]
        if failed:
            first = failed[0]
            raise SearchUnavailable(
                f"Azure AI Search refused {len(failed)} of {len(documents)} documents "
                f"(first: {first.key}: {first.error_message}). Try again; if it persists, check the index schema."
            )

    async def _documents(self, search_text: str, **options: Any) -> AsyncIterator[dict[str, Any]]:
        try:
            results = await self.search_client.search(search_text=search_text, **options)
            async for document in results:
                yield document
        except ResourceNotFoundError as exc:
            raise SearchUnavailable(
                f"The Azure AI Search index {self.index_name!r} does not exist yet: index documents first "
                "(folio index PATH --container NAME), or check AZURE_SEARCH_INDEX."
            ) from exc
        except AzureError as exc:
            raise _unavailable(exc) from exc

    async def _all_documents(self, **options: Any) -> AsyncIterator[dict[str, Any]]:
        # The SDK follows the service's next-page parameters (the service returns 1000 results per request).
        try:
            async for document in self._documents("*", top=100_000, **options):
                yield document
        except SearchUnavailable as exc:
            if isinstance(exc.__cause__, ResourceNotFoundError):
                return
            raise


def _score(hit: dict[str, Any]) -> float:
    reranked = hit.get("@search.reranker_score")
    return float(reranked if reranked is not None else hit.get("@search.score") or 0.0)


def _chunk(hit: dict[str, Any], score: float) -> Chunk:
    return Chunk(
        id=hit["id"],
        file=hit["file"],
        page=hit.get("page"),
        container=hit["container"],
        tags=tags_of(hit.get("tags")),
        doc_date=hit.get("doc_date"),
        text=hit.get("content") or "",
        context=hit.get("context") or "",
        tabular=bool(hit.get("tabular")),
        score=round(score, 6),
    )


def _document(chunk: Chunk, held: FileFields, vector: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "id": chunk.id,
        "content": chunk.text,
        "title": file_title(chunk.file),
        "context": chunk.context,
        "container": chunk.container,
        "tags": [tag_term(tag) for tag in chunk.tags],
        "page": chunk.page,
        "doc_date": chunk.doc_date,
        "file": chunk.file,
        "tabular": chunk.tabular,
        "fingerprint": held.fingerprint,
        "source": held.source,
        "pages": held.pages,
        "indexed_at": held.indexed_at,
    }
    if vector is not None:
        document[VECTOR_FIELD] = [float(x) for x in vector]
    return document


def _unavailable(exc: AzureError) -> SearchUnavailable:
    status = exc.status_code if isinstance(exc, HttpResponseError) else None
    detail = f"HTTP {status}: {exc.message}" if status else type(exc).__name__
    return SearchUnavailable(
        f"Azure AI Search did not answer ({detail}). Check AZURE_SEARCH_ENDPOINT and AZURE_SEARCH_KEY, "
        "or try again in a few minutes."
    )
