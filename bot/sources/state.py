"""What Folio knows of each source since its last run: one SQLite file beside the local index (FOLIO_DATA_DIR).

Why SQLite beside the index, not Redis: the state describes what the index and Folio's kept copies hold, and those
live in the data folder too; a volume that loses one loses all three together, and the next sync rebuilds them. It
needs no server (`folio sync` on a laptop), a file of 20,000 rows costs a few MB on disk and nothing in memory, and
"what was not seen this run" is one indexed query, so comparing streams. Redis holds only the lease (who syncs a
source now), which must be shared between machines.

    files      (source, path) -> size, modified, hash, identity as last listed; the content's sha256 as fetched;
               the document it became (its name in the container) or why it could not be read; the run that saw it
    runs       source -> the last run's SourceStatus as JSON (what `folio sources` shows)
    known_bad  (container, file path) -> the content that failed and why: `folio index` skips it until it changes
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.sources.listing import Entry
from bot.sources.status import SourceStatus

FileState = Literal["indexed", "unreadable"]
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    source TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL, modified TEXT NOT NULL, hash TEXT NOT NULL,
    identity TEXT NOT NULL, settings TEXT NOT NULL, content TEXT NOT NULL, document TEXT NOT NULL,
    state TEXT NOT NULL, reason TEXT NOT NULL, reading TEXT NOT NULL, seen INTEGER NOT NULL,
    PRIMARY KEY (source, path));
CREATE INDEX IF NOT EXISTS files_seen ON files (source, seen);
CREATE INDEX IF NOT EXISTS files_by_document ON files (document);
CREATE TABLE IF NOT EXISTS runs (source TEXT PRIMARY KEY, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS known_bad (
    container TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL, reason TEXT NOT NULL,  -- content: failure_key
    PRIMARY KEY (container, path));
"""
_BATCH = 500  # rows a query reads at once: SQLite's variable limit is far above, memory stays flat


@dataclass(frozen=True, kw_only=True)
class Held:
    """One file of a source as the last run left it."""

    path: str
    size: int
    modified: str
    hash: str
    identity: str
    settings: str  # the container and tags it was indexed with: a change in the sources file re-indexes it
    content: str  # sha256 of the bytes fetched
    document: str  # its name in the container ("" when it was never indexed)
    state: FileState
    reason: str = ""  # why it could not be read
    reading: str = ""  # how it was read when it failed (bot.app.sync.reading_stamp): a change tries it again

    def lists_as(self, entry: Entry) -> bool:
        """Whether `entry` is this file as listed last time (size, time, and the hash when both have one)."""
        same_hash = not entry.hash or not self.hash or entry.hash == self.hash
        return entry.size == self.size and entry.modified == self.modified and same_hash


class SyncState:
    """The state file, opened once per command."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # private, as the rest of the data folder
        os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))  # SQLite gives its -wal and -shm files this mode
        self._db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")  # `folio sources` reads while a sync writes
        # No fsync per commit (one per file recorded would cost more than indexing it): a crash may lose the last
        # records, and the next run then finds those files changed and indexes them again; nothing is lost.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def held(self, source: str, paths: Sequence[str]) -> dict[str, Held]:
        """The rows of `paths` (at most a batch) that this source holds."""
        marks = ",".join("?" * len(paths))
        rows = self._db.execute(f"SELECT * FROM files WHERE source = ? AND path IN ({marks})", (source, *paths))
        return {held.path: held for held in map(_held, rows)}

    def mark_seen(self, source: str, paths: Iterable[str], run: int) -> None:
        with self._db:
            self._db.executemany(
                "UPDATE files SET seen = ? WHERE source = ? AND path = ?", ((run, source, path) for path in paths)
            )

    def unseen(self, source: str, run: int) -> Iterator[Held]:
        """The files this run did not list or process: gone from the source (after a whole listing)."""
        cursor = self._db.execute("SELECT * FROM files WHERE source = ? AND seen != ?", (source, run))
        while rows := cursor.fetchmany(_BATCH):
            yield from map(_held, rows)

    def record(self, source: str, held: Held, run: int) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    source,
                    held.path,
                    held.size,
                    held.modified,
                    held.hash,
                    held.identity,
                    held.settings,
                    held.content,
                    held.document,
                    held.state,
                    held.reason,
                    held.reading,
                    run,
                ),
            )

    def document_in_use(self, source: str, document: str, run: int) -> bool:
        """Whether a file this run saw is indexed as `document` (a file moved to another folder keeps its name)."""
        row = self._db.execute(
            "SELECT 1 FROM files WHERE source = ? AND seen = ? AND document = ? LIMIT 1", (source, run, document)
        ).fetchone()
        return row is not None

    def holders(self, container: str, document: str) -> list[tuple[str, str]]:
        """(source, path) of every file of any source indexed as `document` in `container`."""
        rows = self._db.execute(
            "SELECT source, path, settings FROM files WHERE document = ? AND state = 'indexed'", (document,)
        )
        return [(source, path) for source, path, settings in rows if settings.split("|", 1)[0] == container]

    def forget(self, source: str, path: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM files WHERE source = ? AND path = ?", (source, path))

    def sources(self) -> dict[str, int]:
        """Every source the state holds files of, with how many."""
        return dict(self._db.execute("SELECT source, COUNT(*) FROM files GROUP BY source").fetchall())

    def all_files(self, source: str) -> Iterator[Held]:
        cursor = self._db.execute("SELECT * FROM files WHERE source = ?", (source,))
        while rows := cursor.fetchmany(_BATCH):
            yield from map(_held, rows)

    def drop(self, source: str) -> None:
        """Forget a source: its files and its last status."""
        with self._db:
            self._db.execute("DELETE FROM files WHERE source = ?", (source,))
            self._db.execute("DELETE FROM runs WHERE source = ?", (source,))

    def unreadable(self, source: str, *, limit: int) -> list[str]:
        """`path: why` for the source's files that could not be read, first `limit` by path."""
        rows = self._db.execute(
            "SELECT path, reason FROM files WHERE source = ? AND state = 'unreadable' ORDER BY path LIMIT ?",
            (source, limit),
        )
        return [f"{path}: {reason}" for path, reason in rows]

    def save_status(self, status: SourceStatus) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?)", (status.name, status.model_dump_json()))

    def statuses(self) -> dict[str, SourceStatus]:
        rows = self._db.execute("SELECT source, status FROM runs")
        return {name: SourceStatus.model_validate_json(text) for name, text in rows}

    def known_bad(self, container: str, path: str) -> tuple[str, str] | None:
        """(content sha256, why) of a file `folio index` could not read, as it was then."""
        row = self._db.execute(
            "SELECT content, reason FROM known_bad WHERE container = ? AND path = ?", (container, path)
        ).fetchone()
        return (row[0], row[1]) if row else None

    def remember_bad(self, container: str, path: str, *, content: str, reason: str) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO known_bad VALUES (?, ?, ?, ?)", (container, path, content, reason))

    def forget_bad(self, container: str, path: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM known_bad WHERE container = ? AND path = ?", (container, path))


def _held(row: tuple[object, ...]) -> Held:
    _, path, size, modified, hash_, identity, settings, content, document, state, reason, reading, _ = row
    return Held(
        path=str(path),
        size=int(str(size)),
        modified=str(modified),
        hash=str(hash_),
        identity=str(identity),
        settings=str(settings),
        content=str(content),
        document=str(document),
        state="unreadable" if state == "unreadable" else "indexed",
        reason=str(reason),
        reading=str(reading),
    )
