"""The embedded search engine: one SQLite file with FTS5 (BM25) and, when an embedder is set, vectors.

Keyword and vector rankings are fused with reciprocal rank fusion. The Scope (container, then tags) is part of the
query that ranks (the FTS5 MATCH, or the SQL that picks vectors), so a top-k cut never happens before the filter.
sqlite3 is blocking, so every call runs in a worker thread, one at a time on one connection. The SQL is in local_sql.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from bot.errors import SearchUnavailable
from bot.models import Chunk, Scope
from bot.retrieval import IndexedFile, apply_score_gap, check_scope, check_top, clean_query, within
from bot.retrieval import local_sql as sql
from bot.retrieval.embedders import Embedder
from bot.retrieval.filters import check_tag_keys
from bot.retrieval.local_schema import TEMP_SCHEMA, migrate
from bot.retrieval.rerank import fuse_rankings, relative_strength, rerank, spread
from bot.retrieval.vocabulary import Vocabulary

T = TypeVar("T")

CANDIDATES = 50  # how deep each ranking goes before the rerank and the fusion
VECTORS_TTL = 60.0  # seconds a container's vectors are kept: another process (`folio index`) may have written


class LocalRetriever:
    """Retriever and IndexWriter over one SQLite file; keyword-only when `embedder` is None."""

    def __init__(
        self, path: Path, *, embedder: Embedder | None = None, score_gap: float = 0.5, vector_weight: float = 0.25
    ) -> None:
        self.path = Path(path)
        self.embedder = embedder
        self.score_gap = score_gap
        # The vector ranking's weight in the fusion (keyword 1): 0.25 lost least on the ground truth with e5-small and
        # still gained on paraphrases (benchmarks/RESULTS.md, "Hybrid done right").
        self.vector_weight = vector_weight
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        # container -> (loaded at, rowids, unit vectors)
        self._vectors: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}
        self._vocab: tuple[int, Vocabulary] | None = None  # (the database's data_version then, vocabulary)

    # --- plumbing ----------------------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                _create_private(self.path)
                db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                try:
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=NORMAL")
                    migrate(db)
                    db.executescript(TEMP_SCHEMA)
                except BaseException:
                    db.close()
                    raise
            except (OSError, sqlite3.Error) as exc:
                raise SearchUnavailable(
                    f"The local index {self.path} cannot be opened ({exc}). Check that the folder is writable "
                    "(FOLIO_DATA_DIR) and that no other program holds the file."
                ) from exc
            self._db = db
        return self._db

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def locked() -> T:
            with self._lock:
                return work(self._connect())

        return await asyncio.to_thread(locked)

    async def close(self) -> None:
        """Close the database file; the retriever reopens it on next use."""

        def shut() -> None:
            with self._lock:
                if self._db is not None:
                    self._db.close()
                    self._db = None

        await asyncio.to_thread(shut)

    # --- IndexWriter ---------------------------------------------------------------------------------------------
    async def count(self, container: str) -> int:
        """How many chunks `container` holds."""
        row = await self._run(
            lambda db: db.execute("SELECT count(*) FROM chunks WHERE container = ?", (container,)).fetchone()
        )
        return int(row[0])

    async def containers(self) -> dict[str, int]:
        """Container -> passages, for every container holding any."""
        return await self._run(sql.containers)

    async def still_indexed(self, files: Collection[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of these (container, file) pairs still have passages in the index."""
        pairs = list(dict.fromkeys(files))
        return await self._run(lambda db: sql.still_indexed(db, pairs)) if pairs else set()

    async def passages(self, container: str, file: str) -> list[Chunk]:
        """Every passage of one file in reading order (a file shared in a thread, read whole)."""
        return [row.chunk(0.0) for row in await self._run(lambda db: sql.file_rows(db, container, file))]

    async def passage_texts(self, shown: Collection[Chunk]) -> dict[str, str]:
        """The text the index holds now under each of these passages' ids (absent: no longer held)."""
        ids = list(dict.fromkeys(chunk.id for chunk in shown))
        return await self._run(lambda db: sql.passage_texts(db, ids)) if ids else {}

    async def files(self, container: str) -> list[IndexedFile]:
        """Every file of `container`, by name, with its passages, pages, tags, date and source."""
        return await self._run(lambda db: sql.files(db, container))

    async def delete_file(self, container: str, file: str) -> None:
        """Remove `file` and its chunks from `container`."""
        self._vectors.pop(container, None)
        self._vocab = None
        await self._run(lambda db: sql.transaction(db, lambda: sql.delete_file(db, container, file)))

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
        """Swap every chunk of `file` for `chunks` in one transaction (embedding them first when configured)."""
        for chunk in chunks:
            if (chunk.container, chunk.file) != (container, file):
                raise ValueError(f"chunk {chunk.id} belongs to {chunk.container}/{chunk.file}, not {container}/{file}")
        vectors = await self._embed_chunks(chunks)

        def write(db: sqlite3.Connection) -> None:
            sql.delete_file(db, container, file)
            for index, chunk in enumerate(chunks):
                sql.insert_chunk(db, chunk, None if vectors is None else vectors[index])
            sql.remember_file(db, container, file, fingerprint, source=source, pages=pages)

        self._vectors.pop(container, None)
        self._vocab = None
        await self._run(lambda db: sql.transaction(db, lambda: write(db)))

    async def compact(self) -> None:
        """Merge the FTS5 index into one segment (`optimize`), dropping what replaced and deleted passages left.

        FTS5 forgets a row by writing a delete marker, and old entries go only when a merge reaches them: files
        indexed again a few times left the bench's index with ~5x the FTS data of a fresh one, and every search read
        through it (1.6x the CPU a search). The ranking is unchanged (bm25's counts are kept exact either way)."""
        await self._run(lambda db: db.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')"))

    async def _embed_chunks(self, chunks: Sequence[Chunk]) -> np.ndarray | None:
        if self.embedder is None or not chunks:
            return None
        return await self.embedder.embed([f"{chunk.context}\n{chunk.text}" for chunk in chunks])

    # --- Retriever -----------------------------------------------------------------------------------------------
    async def search(self, query: str, scope: Scope, *, top: int) -> list[Chunk]:
        """At most `top` chunks of `scope`, best first; hybrid when an embedder is set, weak matches cut."""
        text = clean_query(query)
        check_scope(scope)
        check_top(top)
        check_tag_keys(scope)
        depth = max(top * 4, CANDIDATES)
        found, plan, tokens = await self._run(
            lambda db: sql.keyword_ranking(db, text, scope, depth, self._vocabulary(db))
        )
        keyword = rerank(text, found, later=plan.later, phrases=plan.phrases, average_tokens=tokens)
        if self.embedder is None:
            # Cut first, then build the Chunks: only `top` of the ~50 candidates are returned.
            kept = apply_score_gap(keyword, self.score_gap, key=[score for _, score in keyword])[:top]
            chunks = [row.chunk(score) for row, score in kept]
        else:
            chunks = await self._fuse(keyword, await self._vector_ranking(text, scope, depth), scope, top)
        return within(scope, chunks)

    def _vocabulary(self, db: sqlite3.Connection) -> Vocabulary:
        # Runs in the worker thread, under the lock; dropped on every write of ours, and reloaded when another
        # connection (`folio index` in another process) has committed since: SQLite's data_version says so, for
        # microseconds a search. A reload reads the whole FTS5 vocabulary (~100 ms of CPU at 50,000 chunks), which
        # a 60 s timer used to repeat while nothing had changed.
        version = sql.data_version(db)
        if self._vocab is None or self._vocab[0] != version:
            self._vocab = (version, sql.load_vocabulary(db))
        return self._vocab[1]

    async def _vector_ranking(self, query: str, scope: Scope, depth: int) -> list[tuple[int, float]]:
        loaded = [await self._container_vectors(container) for container in scope.containers]
        loaded = [(ids, vectors) for ids, vectors in loaded if len(ids)]
        if not loaded or self.embedder is None:  # search() asks only with an embedder
            return []
        rowids = np.concatenate([ids for ids, _ in loaded])
        matrix = np.vstack([vectors for _, vectors in loaded])
        if scope.tags:
            allowed = await self._run(lambda db: sql.scoped_rowids(db, scope))
            keep = np.isin(rowids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
            rowids, matrix = rowids[keep], matrix[keep]
        query_vector = (await self.embedder.embed([query], query=True))[0]
        similarity = matrix @ query_vector
        order = np.argsort(-similarity)[:depth]
        return [(int(rowids[i]), float(similarity[i])) for i in order]

    async def _container_vectors(self, container: str) -> tuple[np.ndarray, np.ndarray]:
        # Kept until a write to that container, or VECTORS_TTL (another process may have written).
        cached = self._vectors.get(container)
        if cached is None or time.monotonic() - cached[0] > VECTORS_TTL:
            rowids, matrix = await self._run(lambda db: sql.load_vectors(db, container))
            cached = self._vectors[container] = (time.monotonic(), rowids, matrix)
        return cached[1], cached[2]

    async def _fuse(
        self, keyword: list[tuple[sql.ChunkRow, float]], vector: list[tuple[int, float]], scope: Scope, top: int
    ) -> list[Chunk]:
        fused = fuse_rankings(
            [row.rowid for row, _ in keyword], [rowid for rowid, _ in vector], weights=(1.0, self.vector_weight)
        )
        # Vector scores are placed within the candidates' range first: cosines sit in a narrow band (see spread).
        strength = relative_strength(
            {row.rowid: score for row, score in keyword}, spread({rowid: score for rowid, score in vector})
        )
        kept = [rowid for rowid in fused if strength.get(rowid, 0.0) >= self.score_gap][:top]
        rows = {row.rowid: row for row, _ in keyword}
        missing = [rowid for rowid in kept if rowid not in rows]
        if missing:
            # Ids from the vector cache: fetched only when they still exist inside the scope (ids are never reused,
            # and a chunk removed by another process since the vectors were loaded is simply absent).
            rows.update(await self._run(lambda db: sql.rows_by_id(db, missing, scope)))
        return [rows[rowid].chunk(fused[rowid]) for rowid in kept if rowid in rows]


def _create_private(path: Path) -> None:
    """Create the index file readable by its owner only (SQLite gives its -wal and -shm files the same mode)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
