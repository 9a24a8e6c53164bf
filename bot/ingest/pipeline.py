"""Files -> Documents -> page-numbered chunks -> an IndexWriter, one whole file at a time."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bot.errors import InvalidInput, UnreadableFile
from bot.ingest.chunking import CHUNK_CHARS, OVERLAP_CHARS, section_headings, split_page
from bot.ingest.readers import SUPPORTED, Document, read_document
from bot.models import Chunk, Tag
from bot.retrieval import IndexWriter

if TYPE_CHECKING:
    from bot.documents import DocumentStore

# Writes a document-level context line (e.g. with a model); the default is the title plus the first heading.
Describe = Callable[[Document], Awaitable[str]]
CONTEXT_CHARS = 160
CHUNKING_VERSION = "sections-1"  # part of the fingerprint: a change in how chunks are made re-indexes every file


@dataclass
class IndexReport:
    """What one indexing run did; `summary()` is the line printed at the end."""

    files: int = 0
    pages: int = 0
    chunks: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)  # "name: why", one per file that was not indexed

    def summary(self) -> str:
        return (
            f"{self.files} files indexed ({self.pages} pages, {self.chunks} chunks), "
            f"{self.skipped} unchanged and skipped, {len(self.failed)} failed."
        )


def collect_files(paths: Sequence[Path]) -> list[Path]:
    """The files to index: named files as given, folders searched recursively for supported files."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED))
        elif path.is_file():
            found.append(path)
        else:
            raise InvalidInput(f"{path} does not exist: name a PDF, text or Markdown file, or a folder of them.")
    return list(dict.fromkeys(found))


def fingerprint(document: Document, options: IndexOptions) -> str:
    """Content hash plus the options that shape the chunks: re-tagging or re-chunking a file re-indexes it."""
    shape = [
        options.container,
        ",".join(sorted(map(str, options.tags))),
        options.date or "",
        f"{options.chunk_chars}/{options.overlap_chars}",
        CHUNKING_VERSION,
    ]
    return hashlib.sha256("\n".join([document.content_hash, *shape]).encode()).hexdigest()


def document_date(document: Document, given: str | None) -> str:
    """--date when given, else the PDF's creation date, else the file's modification date."""
    return given or document.metadata_date or document.modified_date


def context_line(document: Document) -> str:
    """`Title: first heading or sentence`, one line that travels with every chunk of the document."""
    first = ""
    for page in document.pages:
        lines = [re.sub(r"\s+", " ", line).strip() for line in page.text.splitlines()]
        first = next((line for line in lines if len(line) > 3 and line.lower() != document.title.lower()), "")
        if first:
            break
    line = f"{document.title}: {first}" if first else document.title
    return line[:CONTEXT_CHARS].strip()


def with_section(context: str, section: str) -> str:
    """The document line followed by the section heading a passage falls under (when it adds words)."""
    if not section or section.lower() in context.lower():
        return context
    return f"{context} | {section}"


def chunk_id(container: str, file: str, page: int | None, position: int) -> str:
    """Stable across runs: same document, page and position -> same id (letters, digits and dashes only)."""
    document = hashlib.sha1(f"{container}\0{file}".encode()).hexdigest()[:16]
    return f"{document}-p{page or 0}-{position}"


@dataclass(frozen=True, kw_only=True)
class IndexOptions:
    """How one run indexes its files."""

    container: str
    tags: tuple[Tag, ...] = ()
    date: str | None = None  # --date; None = the PDF's metadata, else the file's mtime
    describe: Describe | None = None
    chunk_chars: int = CHUNK_CHARS
    overlap_chars: int = OVERLAP_CHARS
    documents: DocumentStore | None = None  # keeps a copy of each indexed file, for citation links


def build_chunks(document: Document, options: IndexOptions, *, context: str) -> list[Chunk]:
    """Every passage of every page, each keeping its page number."""
    chunks = []
    doc_date = document_date(document, options.date)
    heading = ""  # the section a page starts in is the one the previous page ended in
    for page in document.pages:
        passages = split_page(page.text, size=options.chunk_chars, overlap=options.overlap_chars)
        headings, heading = section_headings(page.text, passages, heading)
        for position, (text, section) in enumerate(zip(passages, headings)):
            chunks.append(
                Chunk(
                    id=chunk_id(options.container, document.file, page.number, position),
                    file=document.file,
                    page=page.number,
                    container=options.container,
                    tags=options.tags,
                    doc_date=doc_date,
                    text=text,
                    context=with_section(context, section),
                    tabular=document.tabular,
                )
            )
    return chunks


async def index_files(
    files: Sequence[Path],
    writer: IndexWriter,
    *,
    container: str,
    tags: Sequence[Tag] = (),
    date: str | None = None,
    describe: Describe | None = None,
    on_file: Callable[[str], None] | None = None,
    chunk_chars: int = CHUNK_CHARS,
    overlap_chars: int = OVERLAP_CHARS,
    documents: DocumentStore | None = None,
) -> IndexReport:
    """Index `files` into `container`: unchanged files are skipped, unreadable ones reported, the rest replaced."""
    options = IndexOptions(
        container=container, tags=tuple(tags), date=date, describe=describe, chunk_chars=chunk_chars,
        overlap_chars=overlap_chars, documents=documents,
    )  # fmt: skip
    report = IndexReport()
    known = await writer.fingerprints(container)
    seen: set[str] = set()
    for path in files:
        try:
            if path.name in seen:
                raise UnreadableFile(f"{path.name}: another file of this name came first (names must differ)")
            seen.add(path.name)
            await _index_one(path, writer, options, known, report)
        except UnreadableFile as exc:
            report.failed.append(str(exc))
        if on_file:
            on_file(path.name)
    return report


async def _index_one(
    path: Path, writer: IndexWriter, options: IndexOptions, known: dict[str, str], report: IndexReport
) -> None:
    document = await asyncio.to_thread(read_document, path)
    version = fingerprint(document, options)
    if known.get(document.file) == version:
        report.skipped += 1
        if options.documents is not None and not options.documents.stored(options.container, document.file):
            await options.documents.keep(options.container, document.file, path)  # indexed before copies were kept
        return
    context = await options.describe(document) if options.describe else context_line(document)
    chunks = build_chunks(document, options, context=context)
    if not chunks:
        raise UnreadableFile(f"{path.name}: no text found (a scanned PDF needs OCR first)")
    await writer.replace_file(options.container, document.file, version, chunks)
    if options.documents is not None:
        await options.documents.keep(options.container, document.file, path)  # replaces the old copy
    report.files += 1
    report.pages += len(document.pages)
    report.chunks += len(chunks)
