"""The Azure AI Search index Folio writes and queries: fields, vector profile, vectorizer, semantic configuration.

One document per chunk. `tags` holds `key:value` strings, so a tag filter is `tags/any(t: t eq 'key:value')`.
What the index knows of a whole file (fingerprint, source path, pages, when it was indexed) rides on each of its
chunks, so listing a container reads its chunks' small fields only (`FILE_FIELDS`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from azure.search.documents.indexes.models import (
    AzureOpenAIVectorizer,
    AzureOpenAIVectorizerParameters,
    HnswAlgorithmConfiguration,
    SearchableField,
    SearchField,
    SearchFieldDataType,
    SearchIndex,
    SemanticConfiguration,
    SemanticField,
    SemanticPrioritizedFields,
    SemanticSearch,
    SimpleField,
    VectorSearch,
    VectorSearchProfile,
    VectorSearchVectorizer,
)

from bot.models import Tag
from bot.retrieval import IndexedFile

VECTOR_FIELD = "vector"
VECTOR_PROFILE = "folio-vector-profile"
HNSW_CONFIG = "folio-hnsw"
VECTORIZER = "folio-azure-openai"
SEMANTIC_CONFIG = "folio-semantic"
# The fields a search returns (never the vector: it is large and nobody reads it).
RETURNED = ["id", "content", "title", "context", "container", "tags", "page", "doc_date", "file", "tabular"]
# The fields a file listing reads (no content, no vector).
FILE_FIELDS = ["file", "fingerprint", "source", "pages", "indexed_at", "tags", "doc_date", "container"]
# Azure OpenAI model names the vectorizer accepts; a deployment named otherwise is sent without a model name.
KNOWN_EMBEDDING_MODELS = frozenset({"text-embedding-ada-002", "text-embedding-3-large", "text-embedding-3-small"})


@dataclass(frozen=True)
class AzureVectorizer:
    """An Azure OpenAI embedding deployment that Azure AI Search calls itself to embed query text."""

    resource_url: str
    deployment: str
    dimensions: int
    api_key: str | None = None  # None: the search service's managed identity calls Azure OpenAI


def index_definition(name: str, *, dimensions: int | None, vectorizer: AzureVectorizer | None) -> SearchIndex:
    """The index schema; the vector field and its profile exist only when embeddings are configured."""
    fields = [
        SimpleField(name="id", type=SearchFieldDataType.STRING, key=True),
        SearchableField(name="content", analyzer_name="en.microsoft"),
        SearchableField(name="title", analyzer_name="en.microsoft"),
        SearchableField(name="context", analyzer_name="en.microsoft"),
        SimpleField(name="container", type=SearchFieldDataType.STRING, filterable=True, facetable=True),
        SearchableField(name="tags", collection=True, searchable=False, filterable=True, facetable=True),
        SimpleField(name="page", type=SearchFieldDataType.INT32, filterable=True, sortable=True),
        SimpleField(name="doc_date", type=SearchFieldDataType.STRING, filterable=True, sortable=True),
        SimpleField(name="file", type=SearchFieldDataType.STRING, filterable=True, facetable=True),
        SimpleField(name="tabular", type=SearchFieldDataType.BOOLEAN, filterable=True),
        SimpleField(name="fingerprint", type=SearchFieldDataType.STRING, filterable=True),
        SimpleField(name="source", type=SearchFieldDataType.STRING, filterable=True),
        SimpleField(name="pages", type=SearchFieldDataType.INT32),
        SimpleField(name="indexed_at", type=SearchFieldDataType.STRING, sortable=True),
    ]
    vector_search = None
    if dimensions:
        fields.append(
            SearchField(
                name=VECTOR_FIELD,
                type="Collection(Edm.Single)",
                searchable=True,
                retrievable=False,
                vector_search_dimensions=dimensions,
                vector_search_profile_name=VECTOR_PROFILE,
            )
        )
        vector_search = _vector_search(vectorizer)
    return SearchIndex(
        name=name,
        fields=fields,
        vector_search=vector_search,
        semantic_search=SemanticSearch(
            default_configuration_name=SEMANTIC_CONFIG,
            configurations=[
                SemanticConfiguration(
                    name=SEMANTIC_CONFIG,
                    prioritized_fields=SemanticPrioritizedFields(
                        title_field=SemanticField(field_name="title"),
                        content_fields=[SemanticField(field_name="content")],
                        keywords_fields=[SemanticField(field_name="context")],
                    ),
                )
            ],
        ),
    )


def _vector_search(vectorizer: AzureVectorizer | None) -> VectorSearch:
    vectorizers: list[VectorSearchVectorizer] = []
    if vectorizer:
        model = vectorizer.deployment if vectorizer.deployment in KNOWN_EMBEDDING_MODELS else None
        vectorizers.append(
            AzureOpenAIVectorizer(
                vectorizer_name=VECTORIZER,
                parameters=AzureOpenAIVectorizerParameters(
                    resource_url=vectorizer.resource_url,
                    deployment_name=vectorizer.deployment,
                    model_name=model,
                    api_key=vectorizer.api_key,
                ),
            )
        )
    return VectorSearch(
        algorithms=[HnswAlgorithmConfiguration(name=HNSW_CONFIG)],
        profiles=[
            VectorSearchProfile(
                name=VECTOR_PROFILE,
                algorithm_configuration_name=HNSW_CONFIG,
                vectorizer_name=VECTORIZER if vectorizer else None,
            )
        ],
        vectorizers=vectorizers or None,
    )


@dataclass(frozen=True, kw_only=True)
class FileFields:
    """What each chunk document carries about its whole file."""

    fingerprint: str
    source: str | None
    pages: int | None
    indexed_at: str


def tags_of(terms: Iterable[object] | None) -> tuple[Tag, ...]:
    """The stored `key:value` strings of a document as Tags."""
    tags = []
    for term in terms or ():
        key, _, value = str(term).partition(":")
        tags.append(Tag(key=key, value=value))
    return tuple(tags)


def file_listing(container: str, documents: Iterable[dict[str, Any]]) -> list[IndexedFile]:
    """One IndexedFile per file named by `documents` (chunk documents with FILE_FIELDS), by file name."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for document in documents:
        grouped.setdefault(str(document["file"]), []).append(document)
    listed = []
    for file, chunks in sorted(grouped.items()):
        first = chunks[0]
        listed.append(
            IndexedFile(
                container=container,
                file=file,
                fingerprint=first.get("fingerprint") or "",
                source=first.get("source"),
                pages=first.get("pages"),
                passages=len(chunks),
                tags=tags_of(first.get("tags")),
                doc_date=first.get("doc_date"),
                indexed_at=first.get("indexed_at"),
            )
        )
    return listed
