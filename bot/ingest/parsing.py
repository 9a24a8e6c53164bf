"""What a file is now (size, modification time, content hash) and reading files into Documents, in a worker thread
or in N worker processes (`folio index --jobs N`): PDFium reads one PDF at a time per process, so processes are what
make reading parallel.
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
from collections.abc import AsyncGenerator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from bot.errors import UnreadableFile
from bot.ingest.converters import Converters
from bot.ingest.formats import read_or_fail
from bot.ingest.readers import Document

_BLOCK = 1 << 20


@dataclass(frozen=True)
class Stamp:
    """A file as it is on disk: same stamp as indexed = unchanged, and it need not be read again."""

    size: int
    modified_ns: int
    content_hash: str  # sha256 of the bytes, as Document.content_hash


def stamp_of(path: Path) -> Stamp:
    """The file's size, modification time and content hash (hashing reads it, but parses nothing)."""
    digest = hashlib.sha256()
    try:
        status = path.stat()
        with path.open("rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
    except OSError as exc:
        raise UnreadableFile(f"{path.name}: cannot be read ({exc.strerror or exc})") from exc
    return Stamp(size=status.st_size, modified_ns=status.st_mtime_ns, content_hash=digest.hexdigest())


async def read_documents(
    paths: Sequence[Path], *, jobs: int = 1, max_chars: int | None = None, converters: Converters | None = None
) -> AsyncGenerator[tuple[Path, Document | UnreadableFile], None]:
    """Each of `paths` read, in their order: its Document, or the UnreadableFile that says why not. With `jobs` > 1
    the files are read in that many processes while the caller writes the ones already read."""
    converting = converters or Converters()
    if jobs <= 1 or len(paths) <= 1:
        for path in paths:
            try:
                yield path, await asyncio.to_thread(read_or_fail, path, max_chars=max_chars, converters=converting)
            except UnreadableFile as exc:
                yield path, exc
        return
    # "spawn": a fresh interpreter per worker; forking a process that runs an event loop and threads can deadlock.
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = [pool.submit(read_or_fail, path, max_chars=max_chars, converters=converting) for path in paths]
        for path, future in zip(paths, futures):
            yield path, await _outcome(path, future)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


async def _outcome(path: Path, future: Future[Document]) -> Document | UnreadableFile:
    try:
        return await asyncio.wrap_future(future)
    except UnreadableFile as exc:
        return exc
    except BrokenProcessPool as exc:  # a reader process died (out of memory, a crash in PDFium)
        return UnreadableFile(f"{path.name}: the process reading it stopped ({exc})")
