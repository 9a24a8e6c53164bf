"""Files shared in a thread, read as that thread's own documents, and searched by its turns alone.

    notes = await read_shared_files(request, conversation, files=thread_files, thread=request.thread)

A file shared with a question (Slack: a mention, a DM or a reply in Folio's thread that carries files) is fetched
from the surface (`FileSource`: only its id is trusted, the service is asked for the file), read by the same
pipeline as `folio index` (PDF, Office, tables, pictures through OCR, text, mail) and indexed into a container of
its own, `thread-<hash of the thread>`, that no channel rule or access grant can name (see `files_container`). Every
turn of the thread then searches its scope and that container (`WithThreadFiles`), so nothing a file says can reach
another thread, and no scope is widened: the container holds only what people in the thread shared there.

Bounds: bytes a file (`max_bytes`, checked before the download), files a thread, pages a file; each refusal is a note
the answer shows. Lifecycle: the files go with the conversation (`forget_thread_files`, when it is deleted) and
with age (`sweep_thread_files`, FOLIO_THREAD_FILE_DAYS: at every start, every share, and hourly while Folio serves).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import tempfile
import unicodedata
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Protocol

from bot import messages
from bot.errors import FolioError
from bot.ingest import IndexOptions, index_files
from bot.ingest.converters import Converters
from bot.ingest.lifecycle import remove_files
from bot.models import Chunk, Conversation, Scope, ThreadFile, display_name
from bot.retrieval import SearchIndex
from bot.store import ThreadKey
from bot.tasks import every
from bot.turns.request import SharedFile, TurnRequest

if TYPE_CHECKING:
    from bot.documents import DocumentStore

log = logging.getLogger(__name__)

CONTAINER_PREFIX = "thread-"
MAX_NAME_CHARS = 120  # a file's name as kept: long enough to tell files apart, short enough for any file system
SWEEP_SECONDS = 3600.0  # how often a serving Folio sweeps the thread files past their days


class FileRefused(FolioError):
    """A shared file Folio will not read; its message says which and why, in the thread."""


@dataclass(frozen=True)
class FetchedFile:
    """A shared file's name and bytes, as its service gave them."""

    name: str
    data: bytes


class FileSource(Protocol):
    """Where a surface's shared files come from (Slack: files.info and the private download URL)."""

    async def fetch(self, shared: SharedFile, *, thread: ThreadKey, max_bytes: int) -> FetchedFile:
        """The file's bytes; FileRefused (naming it) when it is too big, of another organisation, or gone."""


@dataclass(frozen=True, kw_only=True)
class ThreadFileRules:
    """How much a thread may share (FOLIO_THREAD_FILE_MB, FOLIO_THREAD_FILES, FOLIO_THREAD_FILE_PAGES)."""

    max_bytes: int = 25 * 1024 * 1024
    max_files: int = 10
    max_pages: int = 300
    max_chars: int | None = None  # FOLIO_MAX_FILE_CHARS, as for indexed files
    days: int = 30  # FOLIO_THREAD_FILE_DAYS: the files of a thread are removed this long after they were read


@dataclass(frozen=True, kw_only=True)
class ThreadFiles:
    """What reading a thread's files takes: where they come from, where they go, and the bounds."""

    source: FileSource
    index: SearchIndex
    documents: DocumentStore | None
    rules: ThreadFileRules
    converters: Converters


def files_container(thread: ThreadKey) -> str:
    """The container of one thread's own files: a name no policy uses (a hash of the thread, not its ids)."""
    digest = hashlib.sha256(f"{thread.team}\0{thread.channel}\0{thread.thread_ts}".encode()).hexdigest()
    return f"{CONTAINER_PREFIX}{digest[:24]}"


def is_thread_container(container: str) -> bool:
    return container.startswith(CONTAINER_PREFIX)


def safe_name(name: str, taken: set[str]) -> str:
    """A shared file's name as it is kept: its last path part, without control characters, at most
    MAX_NAME_CHARS (its type kept), and told apart from the names `taken` (`contract (2).pdf`)."""
    plain = "".join(char for char in PurePath(name.replace("\\", "/")).name if unicodedata.category(char)[0] != "C")
    plain = re.sub(r"\s+", " ", plain).strip().lstrip(".-~$") or "file"
    stem, suffix = _split(plain)
    stem = stem[: MAX_NAME_CHARS - len(suffix)].rstrip() or "file"
    candidate, number = f"{stem}{suffix}", 2
    while candidate.lower() in {name.lower() for name in taken}:
        candidate, number = f"{stem} ({number}){suffix}", number + 1
    return candidate


def _split(name: str) -> tuple[str, str]:
    suffix = PurePath(name).suffix
    return (name[: -len(suffix)], suffix) if 1 < len(suffix) <= 8 else (name, "")


async def read_shared_files(request: TurnRequest, conversation: Conversation, *, files: ThreadFiles) -> list[str]:
    """Read the files shared with `request` that the thread has not read yet into its own container, recording
    each in `conversation.thread_files`; one note a file, for the answer: what was read, or why not."""
    notes: list[str] = []
    container = files_container(request.thread)
    for shared in request.files:
        if any(known.id == shared.id for known in conversation.thread_files):
            continue  # the same file shared again (or Slack's retry of the message): read once
        if len(conversation.thread_files) >= files.rules.max_files:
            notes.append(messages.thread_files_full(shared.name, files.rules.max_files))
            continue
        try:
            fetched = await files.source.fetch(shared, thread=request.thread, max_bytes=files.rules.max_bytes)
            taken = {known.name for known in conversation.thread_files}
            read = await _index(shared, fetched, safe_name(fetched.name, taken), container, files)
        except FileRefused as refused:
            notes.append(str(refused))
            continue
        conversation.thread_files.append(read)
        notes.append(messages.thread_file_read(read.name, read.pages))
    if request.files:  # other threads' files past their days go now (and at every start)
        await sweep_quietly(files.index, files.documents, days=files.rules.days)
    return notes


async def _index(shared: SharedFile, fetched: FetchedFile, name: str, container: str, files: ThreadFiles) -> ThreadFile:
    """Index one fetched file into the thread's container (the pipeline of `folio index`); FileRefused when the
    pipeline could not read it or it has more pages than a thread file may."""
    with tempfile.TemporaryDirectory(prefix="folio-thread-file-") as work:
        path = Path(work) / name
        path.write_bytes(fetched.data)
        report = await index_files(
            [path],
            files.index,
            IndexOptions(
                container=container,
                tags=(),
                documents=files.documents,
                max_chars=files.rules.max_chars,
                converters=files.converters,
            ),
        )
    if report.failed or report.skipped or not report.files:
        why = (report.failed or report.skipped or [f"{name}: no text found"])[0]
        raise FileRefused(messages.thread_file_unreadable(why))
    held = [each for each in await files.index.files(container) if display_name(each.file) == name]
    pages = held[0].pages if held else None
    if pages is not None and pages > files.rules.max_pages:
        await remove_files(files.index, files.documents, held)
        raise FileRefused(messages.thread_file_too_long(name, pages, files.rules.max_pages))
    return ThreadFile(id=shared.id, name=name, file=held[0].file if held else name, pages=pages)


@dataclass(frozen=True)
class WithThreadFiles:
    """A thread's search: its scope and its own files, each searched with its own scope (checked on every row, as
    always), the best `top` of both kept. Every other call goes to the index itself."""

    inner: SearchIndex
    own: Scope

    async def search(self, query: str, scope: Scope, *, top: int) -> list[Chunk]:
        theirs, mine = await asyncio.gather(
            self.inner.search(query, scope, top=top), self.inner.search(query, self.own, top=top)
        )
        return sorted([*theirs, *mine], key=lambda chunk: chunk.score, reverse=True)[:top]

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def thread_search(index: SearchIndex, conversation: Conversation, thread: ThreadKey) -> SearchIndex:
    """What a turn of `thread` searches: the index, and its own files beside its scope when it has any."""
    if not conversation.thread_files:
        return index
    return WithThreadFiles(index, Scope(containers=(files_container(thread),)))  # type: ignore[return-value]


@dataclass(frozen=True)
class ThreadReader:
    """The read_document tool's side: a thread's own files, read whole from the index, by their shared names."""

    index: SearchIndex
    container: str
    files: tuple[ThreadFile, ...]

    @property
    def titles(self) -> tuple[str, ...]:
        return tuple(known.name for known in self.files)

    async def read(self, title: str) -> list[Chunk] | None:
        known = next((each for each in self.files if each.name == title), None)
        return None if known is None else await self.index.passages(self.container, known.file)


def thread_reader(index: SearchIndex, conversation: Conversation, thread: ThreadKey) -> ThreadReader | None:
    """The files of `thread` the agent may read whole (None: it has none)."""
    if not conversation.thread_files:
        return None
    return ThreadReader(index, files_container(thread), tuple(conversation.thread_files))


async def forget_thread_files(thread: ThreadKey, index: SearchIndex, documents: DocumentStore | None) -> int:
    """Remove every file shared in `thread` (index and kept copies), as its conversation is deleted; how many."""
    held = await index.files(files_container(thread))
    await remove_files(index, documents, held)
    return len(held)


async def sweep_thread_files(index: SearchIndex, documents: DocumentStore | None, *, days: int) -> int:
    """Remove the thread files read more than `days` ago, of every thread; how many."""
    cutoff = datetime.now(timezone.utc) - timedelta(days=days)
    old = []
    for container in await index.containers():
        if is_thread_container(container):
            old += [held for held in await index.files(container) if _read_before(held.indexed_at, cutoff)]
    await remove_files(index, documents, old)
    return len(old)


def sweeping_every(
    index: SearchIndex, documents: DocumentStore | None, *, days: int, seconds: float = SWEEP_SECONDS
) -> AbstractAsyncContextManager[None]:
    """While the block runs (`folio serve`), sweep the files past their days every `seconds`: a Folio left serving
    for weeks without a new share still keeps no file longer than its days (and an hour)."""
    return every(seconds, lambda: sweep_quietly(index, documents, days=days), name="thread files past their days")


async def sweep_quietly(index: SearchIndex, documents: DocumentStore | None, *, days: int) -> None:
    """`sweep_thread_files`, logged; an index that cannot be reached now is swept next time."""
    try:
        removed = await sweep_thread_files(index, documents, days=days)
    except FolioError as error:
        log.warning("thread files not swept: %s", error)
        return
    if removed:
        log.info("removed %d file(s) shared in threads more than %d days ago", removed, days)


def _read_before(indexed_at: str | None, cutoff: datetime) -> bool:
    if not indexed_at:
        return True
    at = datetime.fromisoformat(indexed_at)
    return (at if at.tzinfo else at.replace(tzinfo=timezone.utc)) < cutoff
