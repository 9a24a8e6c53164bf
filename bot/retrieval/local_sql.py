"""The SQL of the local engine: schema, writes and the keyword ranking. Blocking; called in the worker thread.

Chunks live in `chunks`; `chunks_fts` is an external-content FTS5 table over (context, text, scope), where `scope`
holds the container and tag tokens that `fts.scoped_match` filters on; `chunk_tags` serves SQL tag filters (vector
search); `files` remembers each file's fingerprint. `chunks.stemmed` is rerank.stem_text of context and text, made at
write time so a search does not stem its candidates again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from bot.errors import SearchUnavailable
from bot.models import Chunk, Scope, Tag
from bot.retrieval.embedders import normalise
from bot.retrieval.fts import match_expression, scope_tokens, scoped_match, terms
from bot.retrieval.rerank import stem_text
from bot.retrieval.vocabulary import QueryPlan, Vocabulary, plan_query

log = logging.getLogger(__name__)

# bm25() weights of the FTS columns (context, text). Weighting the document line higher did not help on the shared
# corpus (its words occur on most pages, so BM25 gives them little weight): rerank.title_boost does that job.
CONTEXT_WEIGHT = 1.0
TEXT_WEIGHT = 1.0

TOKENIZER = "porter unicode61 remove_diacritics 2"
SCHEMA_VERSION = 3  # bump when the layout changes: older files are emptied and must be indexed again
ADDED_COLUMNS = {3: "ALTER TABLE chunks ADD COLUMN stemmed TEXT"}  # version -> the change that reaches it in place

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS files (
    container TEXT NOT NULL, file TEXT NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (container, file));
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, container TEXT NOT NULL, file TEXT NOT NULL, page INTEGER,
    doc_date TEXT, tabular INTEGER NOT NULL DEFAULT 0, tags TEXT NOT NULL DEFAULT '[]', context TEXT NOT NULL,
    text TEXT NOT NULL, scope TEXT NOT NULL, vector BLOB, stemmed TEXT);
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

COLUMNS = "c.rowid, c.id, c.file, c.page, c.container, c.tags, c.doc_date, c.text, c.context, c.tabular, c.stemmed"


def migrate(db: sqlite3.Connection) -> None:
    """Create the schema; an index file from an older layout is emptied (it is rebuilt by indexing again)."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    if version >= 2 and all(step in ADDED_COLUMNS for step in range(version + 1, SCHEMA_VERSION + 1)):
        # Only columns were added since: existing chunks keep working (stemmed = NULL is computed at search time).
        for step in range(version + 1, SCHEMA_VERSION + 1):
            db.execute(ADDED_COLUMNS[step])
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return
    if db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'chunks'").fetchone()[0]:
        log.warning("the local index has an older layout (v%s); it is emptied: index the documents again", version)
        db.executescript(
            "DROP TABLE IF EXISTS chunks_fts; DROP TABLE IF EXISTS chunk_tags; DROP TABLE IF EXISTS chunks;"
            " DROP TABLE IF EXISTS files;"
        )
    db.executescript(SCHEMA)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


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


def insert_chunk(db: sqlite3.Connection, chunk: Chunk, vector: np.ndarray | None) -> None:
    tags = json.dumps([[tag.key, tag.value] for tag in chunk.tags], ensure_ascii=False)
    blob = None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()
    scope = scope_tokens(chunk.container, [f"{tag.key}:{tag.value}" for tag in chunk.tags])
    cursor = db.execute(
        "INSERT INTO chunks (id, container, file, page, doc_date, tabular, tags, context, text, scope, vector,"
        " stemmed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (chunk.id, chunk.container, chunk.file, chunk.page, chunk.doc_date, int(chunk.tabular), tags,
         chunk.context, chunk.text, scope, blob, stem_text(f"{chunk.context} {chunk.text}")),
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
) -> tuple[list[tuple[tuple, float]], QueryPlan, float]:
    """Candidates by FTS5 bm25 of the plan's selecting words, with the plan and the average chunk length."""
    plan = plan_query(query, stems(db, terms(query)), vocabulary)
    expression = match_expression(plan.words)
    if expression is None:
        return [], plan, vocabulary.average_tokens
    # The scope is part of the MATCH (see fts.scoped_match); the scope column weighs 0 in bm25.
    ranked = (
        f"SELECT rowid, -bm25(chunks_fts, {CONTEXT_WEIGHT}, {TEXT_WEIGHT}, 0.0) AS score FROM chunks_fts"
        " WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?"
    )
    sql = f"SELECT {COLUMNS}, r.score FROM ({ranked}) r JOIN chunks c ON c.rowid = r.rowid ORDER BY r.score DESC"
    rows = _ranked(db, sql, expression, scope, depth)
    if len(rows) < depth and plan.wider:
        # Too few candidates for the rarer words alone (a small container may hold only the common ones).
        later = tuple((word, idf) for word, idf in plan.later if word not in plan.wider)
        plan = replace(plan, words=(*plan.words, *plan.wider), later=later, wider=())
        rows = _ranked(db, sql, match_expression(plan.words) or expression, scope, depth)
    hits = [(row[:-1], row[-1]) for row in rows if in_scope(row, scope)]
    return hits, plan, vocabulary.average_tokens


def _ranked(db: sqlite3.Connection, sql: str, expression: str, scope: Scope, depth: int) -> list[tuple]:
    try:
        return db.execute(sql, [scoped_match(expression, scope.containers, scope.tags_by_key()), depth]).fetchall()
    except sqlite3.OperationalError as exc:
        raise SearchUnavailable(f"The local index could not run this search ({exc}).") from exc


def in_scope(row: tuple, scope: Scope) -> bool:
    """Defence in depth: the MATCH already applied the scope; a row outside it would mean a token collision."""
    tags = tuple(Tag(key=key, value=value) for key, value in json.loads(row[5]))
    return scope.allows(row[4], tags)


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


def rows_by_id(db: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, tuple]:
    marks = ", ".join("?" * len(rowids))
    rows = db.execute(f"SELECT {COLUMNS} FROM chunks c WHERE c.rowid IN ({marks})", list(rowids)).fetchall()
    return {row[0]: row for row in rows}


def stemmed(row: tuple) -> str:
    """The chunk's stem_text, stored at index time (computed here for chunks indexed before it was)."""
    return row[10] or stem_text(f"{row[8]} {row[7]}")


def page_key(row: tuple) -> object:
    # Chunks of a text file have no page: each is its own place. The container is part of the place: a scope over
    # several containers may hold two files of the same name.
    return (row[4], row[2], row[3]) if row[3] is not None else row[1]


def row_to_chunk(row: tuple, score: float) -> Chunk:
    _rowid, chunk_id, file, page, container, tags, doc_date, text, context, tabular, _stemmed = row
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
