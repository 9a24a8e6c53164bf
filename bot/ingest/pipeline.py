"""Files -> Documents -> page-numbered chunks -> an IndexWriter, one whole file at a time."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from bot import messages
from bot.errors import InvalidInput, MissingConverter, UnreadableFile
from bot.ingest.chunking import CHUNK_CHARS, OVERLAP_CHARS, bridge, section_headings, split_page
from bot.ingest.converters import Converters
from bot.ingest.kinds import SUPPORTED, free_name, is_noise, original_name, stored_name
from bot.ingest.margins import strip_running_lines
from bot.ingest.parsing import Stamp, read_documents, stamp_of
from bot.ingest.readers import Document
from bot.ingest.tables import row_passages
from bot.models import CONTAINER_NAME, Chunk, TablePlace, Tag, display_name, table_context
from bot.retrieval import IndexedFile, IndexWriter

if TYPE_CHECKING:
    from bot.documents import DocumentStore

# Writes a document-level context line (e.g. with a model); the default is the title plus the first heading.
Describe = Callable[[Document], Awaitable[str]]
CONTEXT_CHARS = 160
# Part of the fingerprint: a change in how chunks are made re-indexes every file. "margins-1": running page headers
# and footers are stripped; "pdfium-1": PDF text read with PDFium, and the file's size and time in the fingerprint;
# "bridge-2": the sentence a page break cuts is also one passage, cited by the page it starts on (chunking.bridge).
CHUNKING_VERSION = "bridge-2"


@dataclass
class IndexReport:
    """What one indexing run did; `summary()` is the line printed at the end."""

    files: int = 0
    pages: int = 0
    chunks: int = 0
    unchanged: int = 0
    failed: list[str] = field(default_factory=list)  # "name: why", one per file that was not indexed
    skipped: list[str] = field(default_factory=list)  # "name (why)": left out by choice (type, symbolic link)
    notes: list[str] = field(default_factory=list)  # "name: what to know" about files that were indexed
    gone: list[IndexedFile] = field(default_factory=list)  # indexed from the paths given, no longer there
    removed: list[IndexedFile] = field(default_factory=list)  # of those, the ones taken out (--prune)

    def add(self, other: IndexReport) -> None:
        """Count `other`'s files into this report."""
        self.files += other.files
        self.pages += other.pages
        self.chunks += other.chunks
        self.unchanged += other.unchanged
        for mine, theirs in ((self.failed, other.failed), (self.skipped, other.skipped), (self.notes, other.notes)):
            mine.extend(theirs)

    def summary(self) -> str:
        return messages.index_summary(
            files=self.files,
            pages=self.pages,
            passages=self.chunks,
            unchanged=self.unchanged,
            failed=len(self.failed),
            skipped=self.skipped,
        )


@dataclass(frozen=True)
class Collected:
    """The files a run indexes, and those left out of the folders it searched, with why."""

    files: list[Path]
    skipped: list[str]  # "sub/notes.docx (unsupported type)", "link.pdf (symbolic link)"
    unreadable: list[Path] = field(default_factory=list)  # folders that could not be listed: what they hold is unknown


def collect_files(paths: Sequence[Path], *, follow_symlinks: bool = False) -> Collected:
    """Named files as given; folders searched recursively for supported files. Hidden files and folders, and the
    lock files of documents being edited (`kinds.is_noise`), are left out silently; symbolic links inside a folder
    are left out (and reported) unless `follow_symlinks`."""
    found: list[Path] = []
    skipped: list[str] = []
    unreadable: list[Path] = []
    for path in paths:
        if path.is_dir():
            _walk(path, follow_symlinks, found, skipped, unreadable)
        elif path.is_file() and is_noise(path.name):
            skipped.append(messages.skipped_noise(path.name))
        elif path.is_file():
            found.append(path)
        else:
            raise InvalidInput(f"{path} does not exist: name a PDF, text or Markdown file, or a folder of them.")
    return Collected(files=list(dict.fromkeys(found)), skipped=skipped, unreadable=unreadable)


def _walk(root: Path, follow: bool, found: list[Path], skipped: list[str], unreadable: list[Path]) -> None:
    seen: set[str] = set()  # real folders already walked: a link loop is walked once

    def cannot_list(error: OSError) -> None:  # said, and kept out of --prune: its files are not known to be gone
        folder = Path(error.filename or root)
        unreadable.append(folder)
        shown = "./" if folder == root else folder.relative_to(root).as_posix() + "/"
        skipped.append(messages.skipped_unreadable(shown, error.strerror or str(error)))

    for folder, folders, names in os.walk(root, followlinks=follow, onerror=cannot_list):
        here = Path(folder)
        real = os.path.realpath(folder)
        if real in seen:
            folders.clear()
            continue
        seen.add(real)
        for name in sorted(folders):
            if name.startswith(".") or (not follow and (here / name).is_symlink()):
                folders.remove(name)
                if not name.startswith("."):
                    skipped.append(messages.skipped_link((here / name).relative_to(root).as_posix() + "/"))
        folders.sort()
        for name in sorted(names):
            path = here / name
            shown = path.relative_to(root).as_posix()
            if name.startswith(".") or is_noise(name):  # hidden, or a lock file beside a document being edited
                continue
            if path.is_symlink() and not follow:
                skipped.append(messages.skipped_link(shown))
            elif path.suffix.lower() not in SUPPORTED:
                skipped.append(messages.skipped_type(shown))
            elif path.is_file():
                found.append(path)


def check_container_name(name: str) -> str:
    """`name` when it may name a container (see models.CONTAINER_NAME), else InvalidInput saying the form."""
    if not CONTAINER_NAME.fullmatch(name):
        raise InvalidInput(messages.bad_container(name))
    return name


def _another_file(first: Path, path: Path) -> bool:
    """Whether `first` still exists and is not `path` itself reached another way (a linked folder)."""
    return first.is_file() and not first.samefile(path)


def source_of(path: Path) -> str:
    """The path a file is remembered by: absolute and normalised, links not resolved (the name the user sees)."""
    return os.path.abspath(path)


def gone_files(
    indexed: Sequence[IndexedFile], roots: Sequence[Path], found: Sequence[Path], unreadable: Sequence[Path] = ()
) -> list[IndexedFile]:
    """The files of `indexed` that came from inside one of the folders `roots` and are not among `found` now;
    never one inside a folder that could not be listed (`unreadable`), which may well still be there."""
    folders = [_as_folder(root) for root in roots if root.is_dir()]
    unknown = tuple(_as_folder(folder) for folder in unreadable)
    present = {source_of(path) for path in found}
    return [
        held
        for held in indexed
        if held.source
        and held.source not in present
        and any(held.source.startswith(folder) for folder in folders)
        and not held.source.startswith(unknown)
    ]


def _as_folder(path: Path) -> str:
    return source_of(path).rstrip(os.sep) + os.sep


def fingerprint(stamp: Stamp, options: IndexOptions) -> str:
    """The file as it is (size, modification time, content) plus the options that shape its chunks: a file whose
    fingerprint is as indexed is skipped unread; re-tagging, re-dating or re-chunking one indexes it again."""
    shape = [
        str(stamp.size),
        str(stamp.modified_ns),  # the file's date is its document date when the PDF gives none and --date is not set
        options.container,
        ",".join(sorted(map(str, options.tags or ()))),
        options.date or "",
        f"{options.chunk_chars}/{options.overlap_chars}",
        CHUNKING_VERSION,
    ]
    return hashlib.sha256("\n".join([stamp.content_hash, *shape]).encode()).hexdigest()


def document_date(document: Document, given: str | None) -> str:
    """--date when given, else the PDF's creation date, else the file's modification date."""
    return given or document.metadata_date or document.modified_date


def context_line(document: Document) -> str:
    """`Title: first heading or sentence`, one line that travels with every chunk of the document."""
    first = ""
    for page in strip_running_lines(document.pages):
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
    """How one run indexes its files (`index_files`), and the shape of each file's chunks."""

    container: str
    tags: tuple[Tag, ...] | None = None  # None: each file keeps the tags it was indexed with (a new file gets none)
    date: str | None = None  # --date; None = the PDF's metadata, else the file's mtime
    describe: Describe | None = None
    chunk_chars: int = CHUNK_CHARS
    overlap_chars: int = OVERLAP_CHARS
    documents: DocumentStore | None = None  # keeps a copy of each indexed file, for citation links
    max_chars: int | None = None  # a file with more text is refused by name (FOLIO_MAX_FILE_CHARS)
    converters: Converters = field(default_factory=Converters)  # LibreOffice, OCR (FOLIO_SOFFICE, --ocr, ...)
    jobs: int = 1  # processes that read files at once (--jobs)


def build_chunks(document: Document, options: IndexOptions, *, context: str) -> list[Chunk]:
    """Every passage of every page (running headers and footers left out), each keeping its page number."""
    chunks = []
    doc_date = document_date(document, options.date)
    if document.sheets:
        return table_chunks(document, options, context=context, doc_date=doc_date)
    heading = ""  # the section a page starts in is the one the previous page ended in
    pages = strip_running_lines(document.pages)
    for index, page in enumerate(pages):
        passages = split_page(page.text, size=options.chunk_chars, overlap=options.overlap_chars)
        headings, heading = section_headings(page.text, passages, heading)
        following = pages[index + 1].text if index + 1 < len(pages) and passages else ""
        overleaf = bridge(page.text, following, size=options.chunk_chars) if following else None
        if overleaf:  # the sentence the page break cuts, cited by the page it starts on (all of it begins there)
            passages.append(overleaf)
            headings.append(headings[-1])
        for position, (text, section) in enumerate(zip(passages, headings)):
            chunks.append(
                Chunk(
                    id=chunk_id(options.container, document.file, page.number, position),
                    file=document.file,
                    page=page.number,
                    container=options.container,
                    tags=options.tags or (),
                    doc_date=doc_date,
                    text=text,
                    context=with_section(context, section),
                    tabular=document.tabular,
                )
            )
    return chunks


def table_chunks(document: Document, options: IndexOptions, *, context: str, doc_date: str) -> list[Chunk]:
    """A spreadsheet's passages: whole rows under their header, the sheet named in the context, no page number."""
    passages = [(sheet.name, passage) for sheet in document.sheets for passage in row_passages(sheet)]
    chunks = []
    for position, (name, passage) in enumerate(passages):
        place = TablePlace(sheet=name, first_row=passage.first_row, last_row=passage.last_row)
        chunks.append(
            Chunk(
                id=chunk_id(options.container, document.file, None, position),
                file=document.file,
                page=None,
                container=options.container,
                tags=options.tags or (),
                doc_date=doc_date,
                text=passage.text,
                context=table_context(context, place),
                tabular=True,
            )
        )
    return chunks


@dataclass(frozen=True)
class FileEvent:
    """What a run is doing with one file, for a progress bar or a log line: `reading` first, then one of the rest."""

    name: str
    state: Literal["reading", "indexed", "unchanged", "failed", "skipped"]
    pages: int = 0  # numbered pages (0 for a text file)
    passages: int = 0


OnFile = Callable[[FileEvent], None]


@dataclass(frozen=True, kw_only=True)
class _Run:
    """What every file of one `index_files` run writes to: the index, the report, the names taken."""

    writer: IndexWriter
    report: IndexReport
    reserved: set[str]  # names no mail attachment may take (see index_files)


async def index_files(
    files: Sequence[Path], writer: IndexWriter, options: IndexOptions, *, on_file: OnFile | None = None
) -> IndexReport:
    """Index `files` into `options.container`: unchanged files are skipped unread, unreadable ones reported, the
    rest read (in `options.jobs` processes) and replaced; `on_file` hears what becomes of each file.

    A file is unchanged when its fingerprint (size, time, content and options) and the path it came from are as
    indexed. A file named like one indexed from another path that still exists is refused: one would replace the
    other."""
    container = check_container_name(options.container)
    report = IndexReport()
    told: OnFile = on_file or (lambda event: None)
    known = {held.file: held for held in await writer.files(container)}
    pending: dict[Path, tuple[IndexOptions, str]] = {}
    seen: dict[str, Path] = {}
    # Names no mail attachment may take: this run's files', and the documents indexed from files of their own.
    reserved = {stored_name(path.name) for path in files} | {held.file for held in known.values() if not _part(held)}
    for path in files:
        try:
            held = _check_name(path, seen, known.get(stored_name(path.name)), container)
            if held is not None and held.source and _part(held) and held.source != source_of(path):
                mail = Path(held.source).name
                report.notes.append(
                    messages.replaces_attachment(path.name, attachment=_attachment(held.file, mail), mail=mail)
                )
            mine = options if options.tags is not None else replace(options, tags=held.tags if held else ())
            version = fingerprint(await asyncio.to_thread(stamp_of, path), mine)
            if held is not None and (held.fingerprint, held.source) == (version, source_of(path)):
                await _unchanged(path, mine, report)
                told(FileEvent(path.name, "unchanged"))
            else:
                pending[path] = (mine, version)
        except UnreadableFile as exc:
            report.failed.append(str(exc))
            told(FileEvent(path.name, "failed"))
    run = _Run(writer=writer, report=report, reserved=reserved)
    reading = read_documents(
        list(pending), jobs=options.jobs, max_chars=options.max_chars, converters=options.converters
    )
    async with aclosing(reading) as reads:
        for path, (mine, version) in pending.items():
            told(FileEvent(path.name, "reading"))
            _, read = await anext(reads)
            try:
                if isinstance(read, UnreadableFile):
                    raise read
                told(await _index_one(run, path, read, mine, version))
            except MissingConverter as exc:  # skipped, with the package to install: not a failure of the file
                report.skipped.append(str(exc))
                told(FileEvent(path.name, "skipped"))
            except UnreadableFile as exc:
                report.failed.append(str(exc))
                told(FileEvent(path.name, "failed"))
    if report.files:
        await writer.compact()  # once a run, after its writes: searches then read no replaced passages
    return report


def _check_name(path: Path, seen: dict[str, Path], held: IndexedFile | None, container: str) -> IndexedFile | None:
    """The indexed file `path` would replace (None for a new one); UnreadableFile when it would replace another."""
    first = seen.setdefault(stored_name(path.name), path)  # orders.xlsx and orders.xlsx.pdf are one name
    if first != path:
        raise UnreadableFile(f"{path.name}: another file of this name came first (names must differ)")
    source = source_of(path)
    old = held.source if held is not None else None
    clash = held is not None and old and old != source and _another_file(Path(old), path)
    if held is not None and old and clash and not _part(held):  # a mail's attachment yields its name to a file
        raise UnreadableFile(messages.name_clash(path.name, new=source, old=old, container=container))
    return held


def _part(held: IndexedFile) -> bool:
    """Whether `held` is a mail's attachment (its name is not its source file's own)."""
    if not held.source:
        return False
    return stored_name(Path(held.source).name) != held.file


def _attachment(file: str, mail: str) -> str:
    """The attachment's own name: `report - budget.txt` of report.eml -> `budget.txt`."""
    return original_name(file).removeprefix(f"{Path(mail).stem} - ")


async def _unchanged(path: Path, options: IndexOptions, report: IndexReport) -> None:
    report.unchanged += 1
    # A converted file's copy is made by reading it: only a file kept as itself is copied without reading.
    if stored_name(path.name) != path.name:
        return
    if options.documents is not None and not options.documents.stored(options.container, path.name):
        await options.documents.keep(options.container, path.name, path)  # indexed before copies were kept


async def _index_one(run: _Run, path: Path, document: Document, options: IndexOptions, version: str) -> FileEvent:
    event = await _index_document(run, path, document, options, version)
    named = {part.file for part in document.parts}
    for part in document.parts:  # a mail's attachments: files of their own, from the same source and version
        if part.file in run.reserved:  # never in place of a document of that name: the next free name
            free = free_name(original_name(part.file), run.reserved | named)
            named.add(free)
            attachment = _attachment(part.file, path.name)
            run.report.notes.append(messages.attachment_renamed(path.name, attachment, free, part.file))
            part = replace(part, file=free)
        try:
            await _index_document(run, path, part, options, version)
        except UnreadableFile as exc:
            run.report.notes.append(str(exc))
    return event


async def _keep(options: IndexOptions, document: Document, path: Path) -> None:
    """Keep Folio's copy: the converted, OCR'd or extracted bytes when reading made some, else the file itself."""
    if options.documents is None:
        return
    if document.copy is None:
        await options.documents.keep(options.container, document.file, path)
    else:
        await options.documents.keep_data(options.container, document.file, document.copy)
    await options.documents.keep_workbook(options.container, document.file, document.workbook)
    await options.documents.note_read(options.container, document.file, document.read)


async def _index_document(run: _Run, path: Path, document: Document, options: IndexOptions, version: str) -> FileEvent:
    context = await options.describe(document) if options.describe else context_line(document)
    chunks = build_chunks(document, options, context=context)
    if not chunks:
        raise UnreadableFile(f"{display_name(document.file)}: no text found")
    pages = sum(1 for page in document.pages if page.number is not None) or None
    await run.writer.replace_file(
        options.container, document.file, version, chunks, source=source_of(path), pages=pages
    )
    await _keep(options, document, path)  # replaces the old copy
    run.report.files += 1
    run.report.pages += len(document.pages)
    run.report.chunks += len(chunks)
    run.report.notes.extend(document.notes)
    return FileEvent(path.name, "indexed", pages=pages or 0, passages=len(chunks))
