"""Search over indexed documents: the protocols every backend speaks, and the checks they share.

    Retriever     search(query, scope, top) -> chunks, best first (what the agent and the CLI use)
    IndexWriter   what ingestion writes through: one file's chunks at a time, with the file's fingerprint

Backends: `local.LocalRetriever` (one SQLite file, the embedded default) and `azure.AzureSearchRetriever`.
Both apply the Scope (container, then tags) inside the backend's query, never after a top-k cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from bot import messages
from bot.errors import InvalidInput
from bot.models import Chunk, Scope

MAX_QUERY_CHARS = 2000


@runtime_checkable
class Retriever(Protocol):
    """Finds the chunks of one Scope that best answer a query."""

    async def search(self, query: str, scope: Scope, *, top: int) -> list[Chunk]:
        """At most `top` chunks of `scope`, best first, weak matches cut by the score gap."""
        ...


@runtime_checkable
class IndexWriter(Protocol):
    """Where ingestion puts chunks: whole files at a time, so a file is never half replaced."""

    async def fingerprints(self, container: str) -> dict[str, str]:
        """File name -> fingerprint of every file indexed in `container`."""
        ...

    async def replace_file(self, container: str, file: str, fingerprint: str, chunks: Sequence[Chunk]) -> None:
        """Swap every chunk of `file` in `container` for `chunks`, and remember its fingerprint."""
        ...

    async def delete_file(self, container: str, file: str) -> None:
        """Remove `file` and its chunks from `container`."""
        ...

    async def count(self, container: str) -> int:
        """How many chunks `container` holds (0 when it does not exist)."""
        ...


@runtime_checkable
class SearchIndex(Retriever, IndexWriter, Protocol):
    """A backend as Folio opens it: searched, written by ingestion, and closed when Folio stops."""

    async def close(self) -> None:
        """Release connections and files; the backend reopens them on next use."""
        ...


def clean_query(query: str) -> str:
    """The query stripped; an empty or blank one is InvalidInput."""
    text = (query or "").strip()
    if not text:
        raise InvalidInput(messages.EMPTY_QUERY)
    return text[:MAX_QUERY_CHARS]


def check_top(top: int) -> int:
    """`top` when it is a sensible result count (1..100), else InvalidInput."""
    if not 1 <= top <= 100:
        raise InvalidInput(messages.bad_top(top))
    return top


def apply_score_gap(chunks: Sequence[Chunk], gap: float, *, key: Sequence[float] | None = None) -> list[Chunk]:
    """Keep chunks, best first, while their score stays >= gap * the top score (scores are relevance, higher = better).

    `key` gives the values to compare when they differ from `chunk.score` (e.g. a reranker's score).
    """
    values = list(key) if key is not None else [chunk.score for chunk in chunks]
    if not chunks:
        return []
    best = values[0]
    if best <= 0:
        return list(chunks)
    return [chunk for chunk, value in zip(chunks, values) if value >= gap * best]


__all__ = ["IndexWriter", "Retriever", "SearchIndex", "apply_score_gap", "check_top", "clean_query"]
