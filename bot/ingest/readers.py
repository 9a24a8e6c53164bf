"""Reads one file into a Document: its pages (numbered for PDFs), title, date and whether it holds a table.

Blocking (pypdf); the pipeline calls these in a worker thread.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import DependencyError, PdfReadError, PyPdfError

from bot.errors import UnreadableFile
from bot.models import file_title

PDF_SUFFIXES = frozenset({".pdf"})
TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown"})
SUPPORTED = PDF_SUFFIXES | TEXT_SUFFIXES
# Office files converted to PDF keep their real extension in front of `.pdf` (orders.xlsx.pdf).
SPREADSHEETS = frozenset({".xlsx", ".xls", ".xlsm", ".csv", ".ods"})


@dataclass(frozen=True)
class Page:
    number: int | None  # 1-based; None for text files, which have no pages
    text: str


@dataclass(frozen=True)
class Document:
    file: str  # the name as stored and shown, e.g. orders.xlsx.pdf
    title: str
    pages: tuple[Page, ...]
    content_hash: str
    metadata_date: str | None  # from the PDF's metadata, ISO date
    modified_date: str  # the file's mtime, ISO date
    tabular: bool


def is_tabular(name: str) -> bool:
    """True for converted spreadsheets such as `orders.xlsx.pdf` (and plain `.csv`)."""
    suffixes = [suffix.lower() for suffix in Path(name).suffixes]
    return any(suffix in SPREADSHEETS for suffix in suffixes[-2:])


def read_document(path: Path) -> Document:
    """Read a PDF, text or Markdown file; UnreadableFile when it cannot be read."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise UnreadableFile(f"{path.name}: not a PDF, text or Markdown file")
    try:
        data = path.read_bytes()
        modified = date.fromtimestamp(path.stat().st_mtime).isoformat()
    except OSError as exc:
        raise UnreadableFile(f"{path.name}: cannot be read ({exc.strerror or exc})") from exc
    digest = hashlib.sha256(data).hexdigest()
    if suffix in PDF_SUFFIXES:
        pages, title, created = _read_pdf(path)
    else:
        pages, title, created = (Page(number=None, text=data.decode("utf-8", errors="replace")),), None, None
    return Document(
        file=path.name,
        title=title or file_title(path.name),
        pages=pages,
        content_hash=digest,
        metadata_date=created,
        modified_date=modified,
        tabular=is_tabular(path.name),
    )


def _read_pdf(path: Path) -> tuple[tuple[Page, ...], str | None, str | None]:
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile(f"{path.name}: the PDF is encrypted with a password; save an unprotected copy")
        pages = tuple(Page(number=n, text=page.extract_text() or "") for n, page in enumerate(reader.pages, start=1))
    except UnreadableFile:
        raise
    except (PyPdfError, DependencyError, ValueError, KeyError, TypeError, OSError, NotImplementedError) as exc:
        # pypdf raises a spread of exceptions on damaged files; all mean "cannot read this one".
        raise UnreadableFile(f"{path.name}: the PDF cannot be read ({exc})") from exc
    return pages, _metadata_title(reader), _metadata_date(reader)


def _metadata_title(reader: PdfReader) -> str | None:
    try:
        title = reader.metadata.title if reader.metadata else None
    except (PdfReadError, ValueError, KeyError, TypeError):
        return None
    title = str(title or "").strip()
    # Word and similar tools often leave placeholder titles that say nothing about the document.
    if not title or title.lower() in {"untitled", "document", "microsoft word"} or title.lower().endswith(".docx"):
        return None
    return title


def _metadata_date(reader: PdfReader) -> str | None:
    try:
        created = reader.metadata.creation_date if reader.metadata else None
    except (PdfReadError, ValueError, KeyError, TypeError):
        return None
    return created.date().isoformat() if isinstance(created, datetime) else None
