"""The SQL of the local engine: writes, listings and the keyword ranking. Blocking; called in the worker thread.

The layout is in local_schema. `chunks_fts` holds each chunk's container and tag tokens in its `scope` column,
which `fts.scoped_match` filters on; `chunk_tags` serves SQL tag filters (vector search); `chunks.stemmed` is
rerank.stem_text of context and text, made at write time so a search does not stem its candidates again. Rows are
read into `ChunkRow`, and every row a search returns is checked against its Scope.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from bot.errors import SearchUnavailable
from bot.models import Chunk, Scope, Tag, utc_now
from bot.retrieval import IndexedFile
from bot.retrieval.embedders import normalise
from bot.retrieval.fts import match_expression, scope_token, scope_tokens, scoped_match, terms
from bot.retrieval.rerank import stem_text
from bot.retrieval.vocabulary import QueryPlan, Vocabulary, plan_query, synonym_words

# bm25() weights of the FTS columns (context, text). Weighting the document line higher did not help on the shared
# corpus (its words occur on most pages, so BM25 gives them little weight): rerank.title_boost does that job.
CONTEXT_WEIGHT = 1.0
TEXT_WEIGHT = 1.0

COLUMNS = "c.rowid, c.id, c.file, c.page, c.container, c.tags, c.doc_date, c.text, c.context, c.tabular, c.stemmed"


class ChunkRow(NamedTuple):
    """One `chunks` row as the searches read it (COLUMNS, in order), with the ranking's score when there is one."""

    rowid: int
    id: str
    file: str
    page: int | None
    container: str
    tags: str  # JSON [[key, value], ...]
    doc_date: str | None
    text: str
    context: str
    tabular: int
    stemmed: str | None
    score: float = 0.0

    def tag_values(self) -> tuple[Tag, ...]:
        return _tags(self.tags)

    def in_scope(self, scope: Scope) -> bool:
        """Whether the row lies inside `scope` (checked on every row a search returns)."""
        return scope.allows(self.container, self.tag_values())

    def stemmed_text(self) -> str:
        """The chunk's stem_text, stored at index time (computed here for chunks indexed before it was)."""
        return self.stemmed or stem_text(f"{self.context} {self.text}")

    def place(self) -> object:
        """Where a citation of the row points: (container, file, page); each chunk of a text file is its own place.
        The container is part of it: a scope over several containers may hold two files of the same name."""
        return (self.container, self.file, self.page) if self.page is not None else self.id

    def chunk(self, score: float) -> Chunk:
        return Chunk(
            id=self.id,
            file=self.file,
            page=self.page,
            container=self.container,
            tags=self.tag_values(),
            doc_date=self.doc_date,
            text=self.text,
            context=self.context,
            tabular=bool(self.tabular),
            score=round(float(score), 6),
        )


def _rows(cursor: sqlite3.Cursor) -> list[ChunkRow]:
    return [ChunkRow(*row) for row in cursor.fetchall()]


def transaction(db: sqlite3.Connection, work: Callable[[], None]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        work()
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def delete_file(db: sqlite3.Connection, container: str, file: str) -> None:
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


def remember_file(
    db: sqlite3.Connection, container: str, file: str, fingerprint: str, *, source: str | None, pages: int | None
) -> None:
    db.execute(
        "INSERT OR REPLACE INTO files (container, file, fingerprint, source, pages, indexed_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (container, file, fingerprint, source, pages, utc_now()),
    )


def files(db: sqlite3.Connection, container: str) -> list[IndexedFile]:
    """Every file of `container` with its passage count, tags and date (from its chunks), by name."""
    rows = db.execute(
        "SELECT f.file, f.fingerprint, f.source, f.pages, f.indexed_at, count(c.rowid), min(c.tags), min(c.doc_date)"
        " FROM files f LEFT JOIN chunks c ON c.container = f.container AND c.file = f.file"
        " WHERE f.container = ? GROUP BY f.file ORDER BY f.file",
        (container,),
    ).fetchall()
    return [
        IndexedFile(
            container=container,
            file=file,
            fingerprint=fingerprint,
            source=source,
            pages=pages,
            indexed_at=indexed_at,
            passages=passages,
            tags=_tags(tags or "[]"),
            doc_date=doc_date,
        )
        for file, fingerprint, source, pages, indexed_at, passages, tags, doc_date in rows
    ]


def file_rows(db: sqlite3.Connection, container: str, file: str) -> list[ChunkRow]:
    """Every chunk of one file, in the order it was indexed: page by page, each page's passages in order."""
    cursor = db.execute(
        f"SELECT {COLUMNS} FROM chunks c WHERE c.container = ? AND c.file = ? ORDER BY c.rowid", (container, file)
    )
    return _rows(cursor)


def still_indexed(db: sqlite3.Connection, pairs: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (container, file) pairs of `pairs` (distinct) that have passages: one seek of chunks_by_file each. (A row
    value `IN (VALUES ...)` scanned the whole index instead, every turn of a thread with sources: 0.17 ms at 1,500
    passages, growing with the index.)"""
    values = ", ".join("(?, ?)" for _ in pairs)
    rows = db.execute(
        f"SELECT v.column1, v.column2 FROM (VALUES {values}) v"
        " WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.container = v.column1 AND c.file = v.column2)",
        [name for pair in pairs for name in pair],
    )
    return {(container, file) for container, file in rows}


_IDS_A_QUERY = 500  # well under SQLite's limit of bound variables


def passage_texts(db: sqlite3.Connection, ids: Sequence[str]) -> dict[str, str]:
    """id -> text of the passages of `ids` the index holds: one seek of the id's unique index each."""
    texts: dict[str, str] = {}
    for start in range(0, len(ids), _IDS_A_QUERY):
        part = ids[start : start + _IDS_A_QUERY]
        marks = ", ".join("?" for _ in part)
        texts.update(db.execute(f"SELECT id, text FROM chunks WHERE id IN ({marks})", part).fetchall())
    return texts


def containers(db: sqlite3.Connection) -> dict[str, int]:
    """Container -> passages, for every container holding any, by name."""
    rows = db.execute("SELECT container, count(*) FROM chunks GROUP BY container ORDER BY container").fetchall()
    return dict(rows)


def insert_chunk(db: sqlite3.Connection, chunk: Chunk, vector: np.ndarray | None) -> None:
    tags = json.dumps([[tag.key, tag.value] for tag in chunk.tags], ensure_ascii=False)
    blob = None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()
    scope = scope_tokens(chunk.container, [f"{tag.key}:{tag.value}" for tag in chunk.tags])
    cursor = db.execute(
        "INSERT INTO chunks (id, container, file, page, doc_date, tabular, tags, context, text, scope, vector,"
        " stemmed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chunk.id,
            chunk.container,
            chunk.file,
            chunk.page,
            chunk.doc_date,
            int(chunk.tabular),
            tags,
            chunk.context,
            chunk.text,
            scope,
            blob,
            stem_text(f"{chunk.context} {chunk.text}"),
        ),
    )
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
    """`alias.container IN (?...) AND EXISTS(...)...` with its parameters: same tag key = any value, keys all
    required."""
    clauses = [f"{alias}.container IN ({', '.join('?' * len(scope.containers))})"]
    params = list(scope.containers)
    for key, values in scope.tags_by_key().items():
        marks = ", ".join("?" * len(values))
        clauses.append(
            f"EXISTS (SELECT 1 FROM chunk_tags t WHERE t.chunk = {alias}.rowid AND t.key = ? AND t.value IN ({marks}))"
        )
        params.extend([key, *values])
    return " AND ".join(clauses), params


def keyword_ranking(
    db: sqlite3.Connection, query: str, scope: Scope, depth: int, vocabulary: Vocabulary
) -> tuple[list[tuple[ChunkRow, float]], QueryPlan, float]:
    """Candidates by FTS5 bm25 of the plan's selecting words, with the plan and the average chunk length."""
    plan = plan_query(query, stems(db, [*terms(query), *synonym_words(query)]), vocabulary)
    expression = match_expression(plan.words)
    if expression is None:
        return [], plan, vocabulary.average_tokens
    # The scope is part of the MATCH (see fts.scoped_match), its containers unless they hold the whole index; the
    # scope column weighs 0 in bm25.
    whole = covers_index(scope.containers, vocabulary)
    ranked = (
        f"SELECT rowid, -bm25(chunks_fts, {CONTEXT_WEIGHT}, {TEXT_WEIGHT}, 0.0) AS score FROM chunks_fts"
        " WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?"
    )
    sql = f"SELECT {COLUMNS}, r.score FROM ({ranked}) r JOIN chunks c ON c.rowid = r.rowid ORDER BY r.score DESC"
    rows = _ranked(db, sql, expression, scope, depth, whole)
    if len(rows) < depth and plan.wider:
        # Too few candidates for the rarer words alone (a small container may hold only the common ones).
        later = tuple((word, idf) for word, idf in plan.later if word not in plan.wider)
        plan = replace(plan, words=(*plan.words, *plan.wider), later=later, wider=())
        rows = _ranked(db, sql, match_expression(plan.words) or expression, scope, depth, whole)
    # The MATCH applied the scope (or the scope held every row when the vocabulary was read); a row outside it would
    # mean a token collision, or a container another process added since: dropped.
    hits = [(row, row.score) for row in rows if row.in_scope(scope)]
    return hits, plan, vocabulary.average_tokens


def covers_index(containers: Sequence[str], vocabulary: Vocabulary) -> bool:
    """Whether `containers` hold every passage of the index (their tokens are in every row: the embedded default,
    one container). Their clause then filters nothing in the MATCH, yet bm25() would still count every row holding
    their token for its idf: ~3 of 12 ms of CPU at 50,000 chunks. Returned rows are checked all the same."""
    held = sum(vocabulary.doc_freq.get(scope_token("c", container), 0) for container in set(containers))
    return held >= vocabulary.total > 0


def _ranked(db: sqlite3.Connection, sql: str, expression: str, scope: Scope, depth: int, whole: bool) -> list[ChunkRow]:
    match = scoped_match(expression, scope.containers, scope.tags_by_key(), whole_index=whole)
    try:
        return _rows(db.execute(sql, [match, depth]))
    except sqlite3.OperationalError as exc:
        raise SearchUnavailable(f"The local index could not run this search ({exc}).") from exc


_STEMS: dict[str, str] = {}  # word -> porter term; the tokenizer never changes, so answers stay true
STEMS_KEPT = 50_000


def stems(db: sqlite3.Connection, words: Sequence[str]) -> dict[str, str]:
    """word -> the term the index's own tokenizer (porter) makes of it (remembered: three statements saved)."""
    new = [word for word in dict.fromkeys(words) if word not in _STEMS]
    if new:
        db.executemany("INSERT INTO temp.query_words (rowid, word) VALUES (?, ?)", list(enumerate(new, start=1)))
        try:
            found = db.execute("SELECT doc, term FROM temp.query_stems ORDER BY doc, offset").fetchall()
        finally:
            db.execute("DELETE FROM temp.query_words")
        if len(_STEMS) > STEMS_KEPT:
            _STEMS.clear()
        for doc, term in found:
            _STEMS.setdefault(new[doc - 1], term)
    return {word: _STEMS[word] for word in words if word in _STEMS}


def data_version(db: sqlite3.Connection) -> int:
    """SQLite's counter that changes when another connection commits to the file (not on this one's own writes)."""
    return int(db.execute("PRAGMA data_version").fetchone()[0])


def load_vocabulary(db: sqlite3.Connection) -> Vocabulary:
    total = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    doc_freq: dict[str, int] = {}
    tokens = 0
    for term, docs, count in db.execute("SELECT term, doc, cnt FROM temp.chunks_vocab"):
        doc_freq[term] = docs
        tokens += count
    return Vocabulary(doc_freq, total, average_tokens=tokens / max(total, 1))


def scoped_rowids(db: sqlite3.Connection, scope: Scope) -> list[int]:
    where, params = scope_sql(scope)
    return [row[0] for row in db.execute(f"SELECT c.rowid FROM chunks c WHERE {where}", params)]


def load_vectors(db: sqlite3.Connection, container: str) -> tuple[np.ndarray, np.ndarray]:
    rows = db.execute(
        "SELECT rowid, vector FROM chunks WHERE container = ? AND vector IS NOT NULL", (container,)
    ).fetchall()
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    rowids = np.array([row[0] for row in rows], dtype=np.int64)
    matrix = normalise(np.vstack([np.frombuffer(row[1], dtype=np.float32) for row in rows]))
    return rowids, matrix


def rows_by_id(db: sqlite3.Connection, rowids: Sequence[int], scope: Scope) -> dict[int, ChunkRow]:
    """The rows of `rowids` that still exist and lie inside `scope` (an id from a cache may name neither)."""
    where, params = scope_sql(scope)
    marks = ", ".join("?" * len(rowids))
    cursor = db.execute(f"SELECT {COLUMNS} FROM chunks c WHERE c.rowid IN ({marks}) AND {where}", [*rowids, *params])
    return {row.rowid: row for row in _rows(cursor) if row.in_scope(scope)}


@functools.lru_cache(maxsize=1024)
def _tags(stored: str) -> tuple[Tag, ...]:
    # Remembered: a search checks the scope of each of its ~50 candidates, and most share a handful of tag sets
    # (json and the Tag models were a tenth of a search's Python time). Tags are frozen, so sharing them is safe.
    return tuple(Tag(key=key, value=value) for key, value in json.loads(stored))
