"""The embedded search engine: one SQLite file with FTS5 (BM25) and, when an embedder is set, vectors.

Keyword and vector rankings are fused with reciprocal rank fusion. The Scope (container, then tags) is part of the
SQL that ranks, so a top-k cut never happens before the filter. sqlite3 is blocking, so every call runs in a worker
thread, one at a time on one connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from bot.errors import SearchUnavailable
from bot.models import Chunk, Scope, Tag
from bot.retrieval import apply_score_gap, check_top, clean_query
from bot.retrieval.embedders import Embedder, normalise
from bot.retrieval.filters import check_tag_keys
from bot.retrieval.fts import match_expression, scope_tokens, scoped_match, terms
from bot.retrieval.rerank import rerank
from bot.retrieval.vocabulary import QueryPlan, Vocabulary, plan_query

T = TypeVar("T")
log = logging.getLogger(__name__)

# bm25() weights of the FTS columns (context, text). Weighting the document line higher did not help on the shared
# corpus (its words occur on most pages, so BM25 gives them little weight): rerank.title_boost does that job.
CONTEXT_WEIGHT = 1.0
TEXT_WEIGHT = 1.0
RRF_K = 60  # the usual reciprocal-rank-fusion constant: later ranks still count, but the top few dominate
CANDIDATES = 50  # how deep each ranking goes before fusion

TOKENIZER = "porter unicode61 remove_diacritics 2"
SCHEMA_VERSION = 2  # bump when the layout changes: older files are emptied and must be indexed again
VOCABULARY_TTL = 60.0  # seconds; another process (e.g. `folio index`) may have written meanwhile

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS files (
    container TEXT NOT NULL, file TEXT NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (container, file));
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, container TEXT NOT NULL, file TEXT NOT NULL, page INTEGER,
    doc_date TEXT, tabular INTEGER NOT NULL DEFAULT 0, tags TEXT NOT NULL DEFAULT '[]', context TEXT NOT NULL,
    text TEXT NOT NULL, scope TEXT NOT NULL, vector BLOB);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (container, file);
CREATE TABLE IF NOT EXISTS chunk_tags (chunk INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunk_tags_by_value ON chunk_tags (key, value, chunk);
CREATE INDEX IF NOT EXISTS chunk_tags_by_chunk ON chunk_tags (chunk);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (
    context, text, scope, content='chunks', content_rowid='rowid', tokenize='{TOKENIZER}');
"""
# Per connection: the index's tokenizer run on query words (to look them up in the vocabulary), and the vocabulary.
TEMP_SCHEMA = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words USING fts5 (word, tokenize='{TOKENIZER}');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stems USING fts5vocab (temp, 'query_words', 'instance');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab USING fts5vocab (main, 'chunks_fts', 'row');
"""

_COLUMNS = "c.rowid, c.id, c.file, c.page, c.container, c.tags, c.doc_date, c.text, c.context, c.tabular"


class LocalRetriever:
    """Retriever and IndexWriter over one SQLite file; keyword-only when `embedder` is None."""

    def __init__(self, path: Path, *, embedder: Embedder | None = None, score_gap: float = 0.5) -> None:
        self.path = Path(path)
        self.embedder = embedder
        self.score_gap = score_gap
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._vectors: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # container -> (rowids, unit vectors)
        self._vocab: tuple[float, Vocabulary] | None = None  # (loaded at, vocabulary)

    # --- plumbing ----------------------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                _migrate(db)
                db.executescript(TEMP_SCHEMA)
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
    async def fingerprints(self, container: str) -> dict[str, str]:
        """File name -> fingerprint of every file indexed in `container`."""
        rows = await self._run(
            lambda db: db.execute("SELECT file, fingerprint FROM files WHERE container = ?", (container,)).fetchall()
        )
        return dict(rows)

    async def count(self, container: str) -> int:
        """How many chunks `container` holds."""
        row = await self._run(
            lambda db: db.execute("SELECT count(*) FROM chunks WHERE container = ?", (container,)).fetchone()
        )
        return int(row[0])

    async def delete_file(self, container: str, file: str) -> None:
        """Remove `file` and its chunks from `container`."""
        self._vectors.pop(container, None)
        self._vocab = None
        await self._run(lambda db: _transaction(db, lambda: _delete_file(db, container, file)))

    async def replace_file(self, container: str, file: str, fingerprint: str, chunks: Sequence[Chunk]) -> None:
        """Swap every chunk of `file` for `chunks` in one transaction (embedding them first when configured)."""
        for chunk in chunks:
            if (chunk.container, chunk.file) != (container, file):
                raise ValueError(f"chunk {chunk.id} belongs to {chunk.container}/{chunk.file}, not {container}/{file}")
        vectors = await self._embed_chunks(chunks)

        def write(db: sqlite3.Connection) -> None:
            _delete_file(db, container, file)
            for index, chunk in enumerate(chunks):
                _insert_chunk(db, chunk, None if vectors is None else vectors[index])
            db.execute(
                "INSERT OR REPLACE INTO files (container, file, fingerprint) VALUES (?, ?, ?)",
                (container, file, fingerprint),
            )

        self._vectors.pop(container, None)
        self._vocab = None
        await self._run(lambda db: _transaction(db, lambda: write(db)))

    async def _embed_chunks(self, chunks: Sequence[Chunk]) -> np.ndarray | None:
        if self.embedder is None or not chunks:
            return None
        return await self.embedder.embed([f"{chunk.context}\n{chunk.text}" for chunk in chunks])

    # --- Retriever -----------------------------------------------------------------------------------------------
    async def search(self, query: str, scope: Scope, *, top: int) -> list[Chunk]:
        """At most `top` chunks of `scope`, best first; hybrid when an embedder is set, weak matches cut."""
        text = clean_query(query)
        check_top(top)
        check_tag_keys(scope)
        depth = max(top * 4, CANDIDATES)
        found, plan, tokens = await self._run(lambda db: _keyword_ranking(db, text, scope, depth, self._vocabulary(db)))
        keyword = rerank(
            text, found, context=lambda row: row[8], text=lambda row: row[7], page=_page_key,
            later=plan.later, phrases=plan.phrases, average_tokens=tokens,
        )  # fmt: skip
        if self.embedder is None:
            chunks = [_chunk(row, score) for row, score in keyword]
            return apply_score_gap(chunks, self.score_gap)[:top]
        vector = await self._vector_ranking(text, scope, depth)
        return await self._fuse(keyword, vector, top)

    def _vocabulary(self, db: sqlite3.Connection) -> Vocabulary:
        # Runs in the worker thread, under the lock; dropped on every write and after VOCABULARY_TTL.
        if self._vocab is None or time.monotonic() - self._vocab[0] > VOCABULARY_TTL:
            self._vocab = (time.monotonic(), _load_vocabulary(db))
        return self._vocab[1]

    async def _vector_ranking(self, query: str, scope: Scope, depth: int) -> list[tuple[int, float]]:
        assert self.embedder is not None
        rowids, matrix = await self._container_vectors(scope.container)
        if not len(rowids):
            return []
        if scope.tags:
            allowed = await self._run(lambda db: _scoped_rowids(db, scope))
            keep = np.isin(rowids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
            rowids, matrix = rowids[keep], matrix[keep]
        query_vector = (await self.embedder.embed([query]))[0]
        similarity = matrix @ query_vector
        order = np.argsort(-similarity)[:depth]
        return [(int(rowids[i]), float(similarity[i])) for i in order]

    async def _container_vectors(self, container: str) -> tuple[np.ndarray, np.ndarray]:
        # Vectors of a container are loaded once and kept until a write to that container.
        if container not in self._vectors:
            self._vectors[container] = await self._run(lambda db: _load_vectors(db, container))
        return self._vectors[container]

    async def _fuse(self, keyword: list[tuple[tuple, float]], vector: list[tuple[int, float]], top: int) -> list[Chunk]:
        fused = fuse_rankings([row[0] for row, _ in keyword], [rowid for rowid, _ in vector])
        strength = relative_strength(
            {row[0]: score for row, score in keyword}, {rowid: score for rowid, score in vector}
        )
        kept = [rowid for rowid in fused if strength.get(rowid, 0.0) >= self.score_gap][:top]
        rows = {row[0]: row for row, _ in keyword}
        missing = [rowid for rowid in kept if rowid not in rows]
        if missing:
            rows.update(await self._run(lambda db: _rows_by_id(db, missing)))
        return [_chunk(rows[rowid], fused[rowid]) for rowid in kept]


def fuse_rankings(*rankings: Sequence[int]) -> dict[int, float]:
    """Reciprocal rank fusion: id -> sum of 1 / (RRF_K + rank), ordered best first."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (RRF_K + rank)
    return dict(sorted(scores.items(), key=lambda pair: -pair[1]))


def relative_strength(*scored: dict[int, float]) -> dict[int, float]:
    """id -> its best score relative to the top score of the same ranking (0..1): the score gap compares this."""
    strength: dict[int, float] = {}
    for scores in scored:
        best = max(scores.values(), default=0.0)
        if best <= 0:
            continue
        for item, score in scores.items():
            strength[item] = max(strength.get(item, 0.0), max(score, 0.0) / best)
    return strength


# --- SQL helpers (run inside the worker thread) ---------------------------------------------------------------------
def _migrate(db: sqlite3.Connection) -> None:
    """Create the schema; an index file from an older layout is emptied (it is rebuilt by indexing again)."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    if db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'chunks'").fetchone()[0]:
        log.warning("the local index has an older layout (version %s); it is emptied: index the documents again", version)
        db.executescript(
            "DROP TABLE IF EXISTS chunks_fts; DROP TABLE IF EXISTS chunk_tags; DROP TABLE IF EXISTS chunks;"
            " DROP TABLE IF EXISTS files;"
        )
    db.executescript(SCHEMA)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _transaction(db: sqlite3.Connection, work: Callable[[], None]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        work()
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _delete_file(db: sqlite3.Connection, container: str, file: str) -> None:
    where = "FROM chunks WHERE container = ? AND file = ?"
    # An external-content FTS5 table forgets a row only when told its old values.
    db.execute(
        "INSERT INTO chunks_fts (chunks_fts, rowid, context, text, scope)"
        f" SELECT 'delete', rowid, context, text, scope {where}",
        (container, file),
    )
    db.execute(f"DELETE FROM chunk_tags WHERE chunk IN (SELECT rowid {where})", (container, file))
    db.execute(f"DELETE {where}", (container, file))
    db.execute("DELETE FROM files WHERE container = ? AND file = ?", (container, file))


def _insert_chunk(db: sqlite3.Connection, chunk: Chunk, vector: np.ndarray | None) -> None:
    tags = json.dumps([[tag.key, tag.value] for tag in chunk.tags], ensure_ascii=False)
    blob = None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()
    scope = scope_tokens(chunk.container, [f"{tag.key}:{tag.value}" for tag in chunk.tags])
    cursor = db.execute(
        "INSERT INTO chunks (id, container, file, page, doc_date, tabular, tags, context, text, scope, vector)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (chunk.id, chunk.container, chunk.file, chunk.page, chunk.doc_date, int(chunk.tabular), tags,
         chunk.context, chunk.text, scope, blob),
    )  # fmt: skip
    rowid = cursor.lastrowid
    db.execute(
        "INSERT INTO chunks_fts (rowid, context, text, scope) VALUES (?, ?, ?, ?)",
        (rowid, chunk.context, chunk.text, scope),
    )
    db.executemany(
        "INSERT INTO chunk_tags (chunk, key, value) VALUES (?, ?, ?)",
        [(rowid, tag.key, tag.value) for tag in dict.fromkeys(chunk.tags)],
    )


def scope_sql(scope: Scope, alias: str = "c") -> tuple[str, list[str]]:
    """`alias.container = ? AND EXISTS(...)...` with its parameters: same tag key = any value, keys all required."""
    clauses = [f"{alias}.container = ?"]
    params = [scope.container]
    for key, values in scope.tags_by_key().items():
        marks = ", ".join("?" * len(values))
        clauses.append(
            f"EXISTS (SELECT 1 FROM chunk_tags t WHERE t.chunk = {alias}.rowid AND t.key = ? AND t.value IN ({marks}))"
        )
        params.extend([key, *values])
    return " AND ".join(clauses), params


def _keyword_ranking(
    db: sqlite3.Connection, query: str, scope: Scope, depth: int, vocabulary: Vocabulary
) -> tuple[list[tuple[tuple, float]], QueryPlan, float]:
    """Candidates by FTS5 bm25 of the plan's selecting words, with the plan and the average chunk length."""
    plan = plan_query(query, _stems(db, terms(query)), vocabulary)
    expression = match_expression(plan.words)
    if expression is None:
        return [], plan, vocabulary.average_tokens
    # The scope is part of the MATCH (see fts.scoped_match); the scope column weighs 0 in bm25.
    ranked = (
        f"SELECT rowid, -bm25(chunks_fts, {CONTEXT_WEIGHT}, {TEXT_WEIGHT}, 0.0) AS score FROM chunks_fts"
        " WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?"
    )
    sql = f"SELECT {_COLUMNS}, r.score FROM ({ranked}) r JOIN chunks c ON c.rowid = r.rowid ORDER BY r.score DESC"
    try:
        rows = db.execute(sql, [scoped_match(expression, scope.container, scope.tags_by_key()), depth]).fetchall()
    except sqlite3.OperationalError as exc:
        raise SearchUnavailable(f"The local index could not run this search ({exc}).") from exc
    hits = [(row[:-1], row[-1]) for row in rows if _in_scope(row, scope)]
    return hits, plan, vocabulary.average_tokens


def _in_scope(row: tuple, scope: Scope) -> bool:
    """Defence in depth: the MATCH already applied the scope; a row outside it would mean a token collision."""
    if row[4] != scope.container:
        return False
    tags = {(key, value) for key, value in json.loads(row[5])}
    return all(any((key, value) in tags for value in values) for key, values in scope.tags_by_key().items())


def _stems(db: sqlite3.Connection, words: Sequence[str]) -> dict[str, str]:
    """word -> the term the index's own tokenizer (porter) makes of it."""
    db.executemany("INSERT INTO temp.query_words (rowid, word) VALUES (?, ?)", list(enumerate(words, start=1)))
    try:
        found = db.execute("SELECT doc, term FROM temp.query_stems ORDER BY doc, offset").fetchall()
    finally:
        db.execute("DELETE FROM temp.query_words")
    stems: dict[str, str] = {}
    for doc, term in found:
        stems.setdefault(words[doc - 1], term)
    return stems


def _load_vocabulary(db: sqlite3.Connection) -> Vocabulary:
    total = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    doc_freq: dict[str, int] = {}
    tokens = 0
    for term, docs, count in db.execute("SELECT term, doc, cnt FROM temp.chunks_vocab"):
        doc_freq[term] = docs
        tokens += count
    return Vocabulary(doc_freq, total, average_tokens=tokens / max(total, 1))


def _scoped_rowids(db: sqlite3.Connection, scope: Scope) -> list[int]:
    where, params = scope_sql(scope)
    return [row[0] for row in db.execute(f"SELECT c.rowid FROM chunks c WHERE {where}", params)]


def _load_vectors(db: sqlite3.Connection, container: str) -> tuple[np.ndarray, np.ndarray]:
    rows = db.execute(
        "SELECT rowid, vector FROM chunks WHERE container = ? AND vector IS NOT NULL", (container,)
    ).fetchall()
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    rowids = np.array([row[0] for row in rows], dtype=np.int64)
    matrix = normalise(np.vstack([np.frombuffer(row[1], dtype=np.float32) for row in rows]))
    return rowids, matrix


def _rows_by_id(db: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, tuple]:
    marks = ", ".join("?" * len(rowids))
    rows = db.execute(f"SELECT {_COLUMNS} FROM chunks c WHERE c.rowid IN ({marks})", list(rowids)).fetchall()
    return {row[0]: row for row in rows}


def _page_key(row: tuple) -> object:
    # Chunks of a text file have no page: each is its own place.
    return (row[2], row[3]) if row[3] is not None else row[1]


def _chunk(row: tuple, score: float) -> Chunk:
    _rowid, chunk_id, file, page, container, tags, doc_date, text, context, tabular = row
    return Chunk(
        id=chunk_id,
        file=file,
        page=page,
        container=container,
        tags=tuple(Tag(key=key, value=value) for key, value in json.loads(tags)),
        doc_date=doc_date,
        text=text,
        context=context,
        tabular=bool(tabular),
        score=round(float(score), 6),
    )
