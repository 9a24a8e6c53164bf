"""Reads one file into a Document: its pages (numbered for PDFs), title, date and whether it holds a table.

Blocking (PDFium, see pdf_text.py); the pipeline calls these in a worker thread or process. A file whose text passes
`max_chars` is refused as soon as reading passes it (a huge file never stalls a run).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from bot import messages
from bot.errors import TextTooLong, UnreadableFile
from bot.ingest import kinds
from bot.ingest.decoding import decode_text
from bot.ingest.pdf_text import read_pdf
from bot.models import file_title

PDF_SUFFIXES = kinds.PDF
TEXT_SUFFIXES = kinds.TEXT
SUPPORTED = PDF_SUFFIXES | TEXT_SUFFIXES  # what this module reads itself; bot.ingest.formats dispatches the rest
# Office files converted to PDF keep their real extension in front of `.pdf` (orders.xlsx.pdf).
SPREADSHEETS = frozenset({".xlsx", ".xls", ".xlsm", ".csv", ".ods"})


@dataclass(frozen=True)
class Page:
    number: int | None  # 1-based; None for text files, which have no pages
    text: str


@dataclass(frozen=True)
class Sheet:
    """One table: a spreadsheet's sheet or a CSV file. Cells as text; the first non-empty row is the header."""

    name: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numbers: tuple[int, ...] = ()  # each row's number as the workbook shows it (the header's is not kept)


@dataclass(frozen=True)
class Document:
    file: str  # the name as stored and shown, e.g. orders.xlsx.pdf
    title: str
    pages: tuple[Page, ...]
    content_hash: str
    metadata_date: str | None  # from the PDF's metadata, ISO date
    modified_date: str  # the file's mtime, ISO date
    tabular: bool
    notes: tuple[str, ...] = ()  # what a person should know about how it was read ("read as Windows-1252")
    copy: bytes | None = None  # kept instead of the file itself: a converted or OCR'd PDF, a web page's text
    sheets: tuple[Sheet, ...] = ()  # a spreadsheet's tables: its passages are whole rows under their header
    parts: tuple[Document, ...] = ()  # a mail's attachments, each indexed as a file of its own
    workbook: bytes | None = None  # a spreadsheet's cells as .xlsx, kept beside its PDF for the citation viewer
    read: str = ""  # how it was read when not as itself ("LibreOffice", "OCR (3 pages)"), for `folio list`


def is_tabular(name: str) -> bool:
    """True for converted spreadsheets such as `orders.xlsx.pdf` (and plain `.csv`)."""
    suffixes = [suffix.lower() for suffix in Path(name).suffixes]
    return any(suffix in SPREADSHEETS for suffix in suffixes[-2:])


def read_document(path: Path, *, max_chars: int | None = None) -> Document:
    """Read a PDF, text or Markdown file; UnreadableFile when it cannot be read or its text passes `max_chars`."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise UnreadableFile(f"{path.name}: not a PDF, text or Markdown file")
    try:
        status = path.stat()
        # No encoding packs more than 4 bytes a character: a text file this big is refused unread (a stray log of
        # gigabytes must not fill the memory first).
        too_big = suffix not in PDF_SUFFIXES and max_chars is not None and status.st_size > 4 * max_chars
        data = b"" if too_big else path.read_bytes()
        modified = date.fromtimestamp(status.st_mtime).isoformat()
    except OSError as exc:
        raise UnreadableFile(f"{path.name}: cannot be read ({exc.strerror or exc})") from exc
    if too_big and max_chars is not None:
        raise TextTooLong(messages.file_too_long(path.name, max_chars))
    digest = hashlib.sha256(data).hexdigest()
    if suffix in PDF_SUFFIXES:
        pages, title, created, notes = _read_pdf(path, max_chars)
    else:
        (pages, notes), title, created = _read_text(path.name, data, max_chars), None, None
    return Document(
        file=path.name,
        title=title or file_title(path.name),
        pages=pages,
        content_hash=digest,
        metadata_date=created,
        modified_date=modified,
        tabular=is_tabular(path.name),
        notes=notes,
    )


def _read_text(name: str, data: bytes, max_chars: int | None) -> tuple[tuple[Page, ...], tuple[str, ...]]:
    decoded = decode_text(data)
    if decoded is None:
        raise UnreadableFile(messages.NOT_TEXT.format(name=name))
    if max_chars is not None and len(decoded.text) > max_chars:
        raise TextTooLong(messages.file_too_long(name, max_chars))
    notes = () if decoded.encoding == "UTF-8" else (messages.read_as(name, decoded.encoding),)
    return (Page(number=None, text=decoded.text),), notes


def _read_pdf(path: Path, max_chars: int | None) -> tuple[tuple[Page, ...], str | None, str | None, tuple[str, ...]]:
    read = read_pdf(path, max_chars)
    pages = tuple(Page(number=number, text=text) for number, text in enumerate(read.pages, start=1))
    return pages, read.title, read.created, ()
