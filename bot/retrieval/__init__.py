"""Search over indexed documents: the protocols every backend speaks, and the checks they share.

    Retriever     search(query, scope, top) -> chunks, best first (what the agent and the CLI use)
    IndexWriter   what ingestion writes and reads through: one file's chunks at a time; the files it holds
    SearchIndex   both, plus containers() (container -> passages), closed when Folio stops

Backends: `local.LocalRetriever` (one SQLite file, the embedded default) and `azure.AzureSearchRetriever`.
Both apply the Scope (containers, then tags) inside the backend's query, never after a top-k cut, and check it
again on every row they return (`within`): whatever a cache or the service holds, no other container's passage
comes back. A search without a container is refused (`check_scope`).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from bot import messages
from bot.errors import InvalidInput
from bot.models import Chunk, Scope, Tag

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 2000
T = TypeVar("T")


@runtime_checkable
class Retriever(Protocol):
    """Finds the chunks of one Scope that best answer a query."""

    async def search(self, query: str, scope: Scope, *, top: int) -> list[Chunk]:
        """At most `top` chunks of `scope`, best first, weak matches cut by the score gap."""
        ...


@dataclass(frozen=True, kw_only=True)
class IndexedFile:
    """One file as an index holds it: what `folio list` shows and what pruning compares with the disk."""

    container: str
    file: str
    fingerprint: str
    source: str | None  # the path it was indexed from; None when indexed before sources were kept
    pages: int | None  # None for a text file (or one indexed before page counts were kept)
    passages: int
    tags: tuple[Tag, ...]
    doc_date: str | None
    indexed_at: str | None  # ISO time, UTC


@runtime_checkable
class IndexWriter(Protocol):
    """Where ingestion puts chunks: whole files at a time, so a file is never half replaced."""

    async def files(self, container: str) -> list[IndexedFile]:
        """Every file indexed in `container`, by name, with its fingerprint and the path it came from."""
        ...

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
        """Swap every chunk of `file` in `container` for `chunks`, and remember its fingerprint, source path and
        page count."""
        ...

    async def delete_file(self, container: str, file: str) -> None:
        """Remove `file` and its chunks from `container`."""
        ...

    async def count(self, container: str) -> int:
        """How many chunks `container` holds (0 when it does not exist)."""
        ...

    async def compact(self) -> None:
        """Tidy the index after a run of replace_file / delete_file calls, so searches read only live data."""
        ...


@runtime_checkable
class SearchIndex(Retriever, IndexWriter, Protocol):
    """A backend as Folio opens it: searched, written by ingestion, listed, and closed when Folio stops."""

    async def containers(self) -> dict[str, int]:
        """Container -> how many passages it holds, for every container holding any."""
        ...

    async def passages(self, container: str, file: str) -> list[Chunk]:
        """Every passage of one file, in reading order."""
        ...

    async def still_indexed(self, files: Collection[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of these (container, file) pairs the index still holds: a thread's earlier sources may have been
        removed since."""
        ...

    async def passage_texts(self, shown: Collection[Chunk]) -> dict[str, str]:
        """The text the index holds now under each of these passages' ids (a passage no longer held is absent): a
        thread's earlier sources may have been re-indexed with other words since."""
        ...

    async def close(self) -> None:
        """Release connections and files; the backend reopens them on next use."""
        ...


def clean_query(query: str) -> str:
    """The query stripped; an empty or blank one is InvalidInput."""
    text = (query or "").strip()
    if not text:
        raise InvalidInput(messages.EMPTY_QUERY)
    return text[:MAX_QUERY_CHARS]


def check_scope(scope: Scope) -> Scope:
    """`scope` when it names at least one container; a search of no container is refused, never widened."""
    if not scope.containers or any(not name for name in scope.containers):
        raise InvalidInput(messages.UNSCOPED_SEARCH)
    return scope


def within(scope: Scope, chunks: Sequence[Chunk]) -> list[Chunk]:
    """The chunks `scope` allows, checked on what a backend is about to return (after fusion and caches)."""
    kept = [chunk for chunk in chunks if chunk.in_scope(scope)]
    if len(kept) != len(chunks):
        log.error("dropped %d search results outside the scope %s", len(chunks) - len(kept), scope.describe())
    return kept


def check_top(top: int) -> int:
    """`top` when it is a sensible result count (1..100), else InvalidInput."""
    if not 1 <= top <= 100:
        raise InvalidInput(messages.bad_top(top))
    return top


def apply_score_gap(chunks: Sequence[T], gap: float, *, key: Sequence[float] | None = None) -> list[T]:
    """Keep chunks, best first, while their score stays >= gap * the top score (scores are relevance, higher = better).

    `key` gives the values to compare when they differ from `chunk.score` (e.g. a reranker's score), and is needed
    for items other than Chunks (the local engine cuts its rows before it builds Chunks of them).
    """
    values = list(key) if key is not None else [chunk.score for chunk in chunks]  # type: ignore[attr-defined]
    if not chunks:
        return []
    best = values[0]
    if best <= 0:
        return list(chunks)
    return [chunk for chunk, value in zip(chunks, values) if value >= gap * best]


__all__ = [
    "IndexWriter",
    "IndexedFile",
    "Retriever",
    "SearchIndex",
    "apply_score_gap",
    "check_scope",
    "check_top",
    "clean_query",
    "within",
]


def reading_order(chunk: Chunk) -> tuple[int, int]:
    """(page, position on the page): the position from the id ingestion gives, `<document>-p<page>-<position>`."""
    position = chunk.id.rpartition("-")[2]
    return (chunk.page or 0, int(position) if position.isdigit() else 0)
