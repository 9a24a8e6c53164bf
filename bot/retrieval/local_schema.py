"""The layout of the local index file and how an older file reaches it. Blocking; called in the worker thread.

    files        one row per indexed file: fingerprint, the path it came from, its page count, when it was indexed
    chunks       one row per passage; `rowid` is AUTOINCREMENT, so an id once given is never given again
    chunk_tags   (chunk rowid, key, value): SQL tag filters for vector search
    chunks_fts   external-content FTS5 over (context, text, scope); `scope` holds the container and tag tokens

Row ids are never reused because a serving process caches them (vectors by container): with SQLite's default
rowid, a file re-indexed into fewer passages or removed by `folio index` in another process freed ids that the
next container's passages took, and a cached id then named another container's passage.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

from bot.errors import SearchUnavailable

log = logging.getLogger(__name__)

TOKENIZER = "porter unicode61 remove_diacritics 2"
SCHEMA_VERSION = 4

CHUNK_COLUMNS = (
    "id TEXT NOT NULL UNIQUE, container TEXT NOT NULL, file TEXT NOT NULL, page INTEGER, doc_date TEXT,"
    " tabular INTEGER NOT NULL DEFAULT 0, tags TEXT NOT NULL DEFAULT '[]', context TEXT NOT NULL, text TEXT NOT NULL,"
    " scope TEXT NOT NULL, vector BLOB, stemmed TEXT"
)
_CHUNK_NAMES = "id, container, file, page, doc_date, tabular, tags, context, text, scope, vector, stemmed"
CHUNKS_BY_FILE = "CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (container, file)"

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS files (
    container TEXT NOT NULL, file TEXT NOT NULL, fingerprint TEXT NOT NULL, source TEXT, pages INTEGER,
    indexed_at TEXT, PRIMARY KEY (container, file));
CREATE TABLE IF NOT EXISTS chunks (rowid INTEGER PRIMARY KEY AUTOINCREMENT, {CHUNK_COLUMNS});
{CHUNKS_BY_FILE};
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


# Each upgrade checks what the file already has: an older Folio that opened a newer file may have set its version
# back without changing its tables.
def _add_columns(db: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> None:
    held = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    for column in columns:
        if column.split()[0] not in held:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")


def _add_stemmed(db: sqlite3.Connection) -> None:
    # Existing chunks keep working: stemmed = NULL is computed at search time.
    _add_columns(db, "chunks", ("stemmed TEXT",))


def _never_reuse_ids(db: sqlite3.Connection) -> None:
    # SQLite cannot make a key AUTOINCREMENT in place: copy the rows, ids kept, so chunks_fts and chunk_tags
    # (which hold those ids) stay true.
    (layout,) = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'chunks'").fetchone()
    if "AUTOINCREMENT" not in layout.upper():
        db.execute(f"CREATE TABLE chunks_v4 (rowid INTEGER PRIMARY KEY AUTOINCREMENT, {CHUNK_COLUMNS})")
        db.execute(f"INSERT INTO chunks_v4 (rowid, {_CHUNK_NAMES}) SELECT rowid, {_CHUNK_NAMES} FROM chunks")
        db.execute("DROP TABLE chunks")
        db.execute("ALTER TABLE chunks_v4 RENAME TO chunks")
        db.execute(CHUNKS_BY_FILE)
    _add_columns(db, "files", ("source TEXT", "pages INTEGER", "indexed_at TEXT"))


# version -> the change that brings a file of the version before to it, keeping its data
UPGRADES: dict[int, Callable[[sqlite3.Connection], None]] = {3: _add_stemmed, 4: _never_reuse_ids}


def migrate(db: sqlite3.Connection) -> None:
    """Create the schema, or bring an older file up to it in place; a file older than any upgrade is emptied."""
    if _version(db) == SCHEMA_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")  # another process may be opening the same file: one migrates, the other waits
    try:
        version = _version(db)
        if version != SCHEMA_VERSION:
            _reach_current(db, version)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _reach_current(db: sqlite3.Connection, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise SearchUnavailable(
            f"The local index was written by a newer Folio (layout v{version}, this one reads v{SCHEMA_VERSION}). "
            "Upgrade Folio, or set FOLIO_DATA_DIR to another folder."
        )
    exists = db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'chunks'").fetchone()[0]
    if exists and version >= 2 and all(step in UPGRADES for step in range(version + 1, SCHEMA_VERSION + 1)):
        for step in range(version + 1, SCHEMA_VERSION + 1):
            UPGRADES[step](db)
        return
    if exists:
        log.warning("the local index has an older layout (v%s); it is emptied: index the documents again", version)
        for table in ("chunks_fts", "chunk_tags", "chunks", "files"):
            db.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
