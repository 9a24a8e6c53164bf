"""The values one sync passes around: how it runs (SyncOptions), where it writes (SyncTargets), what it counted
(Tally), and the one run of one source they make together (SyncRun)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bot.ingest.converters import Converters
from bot.ingest.pipeline import OnFile
from bot.models import DocumentChange
from bot.sources.listing import Rclone
from bot.sources.spec import SourceSpec
from bot.sources.state import Held, SyncState

if TYPE_CHECKING:
    from bot.documents import DocumentStore
    from bot.retrieval import SearchIndex


@dataclass(frozen=True, kw_only=True)
class SyncOptions:
    """How `folio sync` runs, for every source."""

    base: Path  # the sources file's folder: relative local folders start there
    staging: Path  # where fetched files wait for indexing (removed once indexed)
    rclone: Rclone
    converters: Converters = field(default_factory=Converters)
    jobs: int = 1
    retry_failed: bool = False
    max_chars: int | None = None
    reading: str = ""  # reading_stamp(converters, max_chars): files that failed are tried again when it changes


@dataclass(frozen=True, kw_only=True)
class SyncTargets:
    """Where a sync writes: the index, Folio's kept copies, the state file; and how it reports files."""

    index: SearchIndex
    documents: DocumentStore | None
    state: SyncState
    on_file: OnFile = lambda event: None
    on_total: Callable[[int], None] = lambda total: None  # files to fetch and read, once the listing is compared


@dataclass
class Tally:
    """What a run counted so far."""

    files: int = 0
    indexed: int = 0
    unchanged: int = 0
    unreadable: int = 0
    removed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)  # "path: why" of files this run could not fetch
    renamed: set[str] = field(default_factory=set)  # paths of gone files whose successor was indexed
    moved_out: list[Held] = field(default_factory=list)  # indexed into a container the source no longer names
    changes: list[DocumentChange] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class SyncRun:
    """One run of one source, as every step of it sees the run: the source, where and how it writes, the run's
    number in the state file, what it counted so far, and whether to stop (checked between batches)."""

    spec: SourceSpec
    targets: SyncTargets
    options: SyncOptions
    run: int  # this run's mark in the state file (time.time_ns() at its start): files not marked by it are gone
    tally: Tally
    stop: Callable[[], bool]
