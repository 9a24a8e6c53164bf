"""The Azure AI Search index Folio writes and queries: fields, vector profile, vectorizer, semantic configuration.

One document per chunk. `tags` holds `key:value` strings, so a tag filter is `tags/any(t: t eq 'key:value')`.
"""

from __future__ import annotations

from dataclasses import dataclass

from azure.search.documents.indexes.models import (
    AzureOpenAIVectorizer,
    AzureOpenAIVectorizerParameters,
    HnswAlgorithmConfiguration,
    SearchField,
    SearchFieldDataType,
    SearchIndex,
    SemanticConfiguration,
    SemanticField,
    SemanticPrioritizedFields,
    SemanticSearch,
    SimpleField,
    SearchableField,
    VectorSearch,
    VectorSearchProfile,
)

VECTOR_FIELD = "vector"
VECTOR_PROFILE = "folio-vector-profile"
HNSW_CONFIG = "folio-hnsw"
VECTORIZER = "folio-azure-openai"
SEMANTIC_CONFIG = "folio-semantic"
# The fields a search returns (never the vector: it is large and nobody reads it).
RETURNED = ["id", "content", "title", "context", "container", "tags", "page", "doc_date", "file", "tabular"]
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
    vectorizers = []
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
