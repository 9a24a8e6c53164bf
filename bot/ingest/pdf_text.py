"""A PDF's text page by page, its title and creation date, read with PDFium (pypdfium2). Blocking.

PDFium reads the shared corpus about 15 times faster per CPU-second than pypdf did (benchmarks/RESULTS.md), and
repairs damaged cross-reference tables quietly. It is not thread-safe: one PDF is read at a time in a process, and
`folio index --jobs N` reads in N processes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from bot import messages
from bot.errors import TextTooLong, UnreadableFile
from bot.pdfium_lock import PDFIUM

_LOCK = PDFIUM  # one lock for every PDFium call in the process: the viewer draws pages with it too
_PDF_DATE = re.compile(r"^D:(\d{4})(\d{2})(\d{2})")
# Word and similar tools often leave placeholder titles that say nothing about the document.
_PLACEHOLDER_TITLES = frozenset({"untitled", "document", "microsoft word"})


@dataclass(frozen=True)
class PdfText:
    pages: tuple[str, ...]  # page 1 first
    title: str | None
    created: str | None  # ISO date


def read_pdf(path: Path, max_chars: int | None) -> PdfText:
    """The text of every page of the PDF at `path`; UnreadableFile when it is damaged beyond repair, locked with a
    password, or its text passes `max_chars` (refused as soon as reading passes it)."""
    with _LOCK:
        try:
            pdf = pdfium.PdfDocument(path)
        except pdfium.PdfiumError as exc:
            if exc.err_code == pdfium_c.FPDF_ERR_PASSWORD:
                raise UnreadableFile(f"{path.name}: the PDF is encrypted with a password; save an unprotected copy")
            raise UnreadableFile(f"{path.name}: the PDF cannot be read ({exc})") from exc
        except OSError as exc:
            raise UnreadableFile(f"{path.name}: cannot be read ({exc.strerror or exc})") from exc
        try:
            pages = tuple(_page_texts(path.name, pdf, max_chars))
            metadata = pdf.get_metadata_dict(skip_empty=True)
        except pdfium.PdfiumError as exc:
            raise UnreadableFile(f"{path.name}: the PDF cannot be read ({exc})") from exc
        finally:
            pdf.close()
    return PdfText(pages=pages, title=_title(metadata.get("Title")), created=_date(metadata.get("CreationDate")))


def _page_texts(name: str, pdf: pdfium.PdfDocument, max_chars: int | None) -> Iterator[str]:
    total = 0
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            text = textpage.get_text_range()
            textpage.close()
        finally:
            page.close()
        # PDFium marks a hyphen where a line breaks inside a word with U+FFFE, and ends lines with \r\n.
        text = text.replace("\ufffe", "-").replace("\r\n", "\n").replace("\r", "\n")
        total += len(text)
        if max_chars is not None and total > max_chars:
            raise TextTooLong(messages.file_too_long(name, max_chars))
        yield text


def _title(value: str | None) -> str | None:
    title = (value or "").strip()
    if not title or title.lower() in _PLACEHOLDER_TITLES or title.lower().endswith(".docx"):
        return None
    return title


def _date(value: str | None) -> str | None:
    """`D:20230306135820-08'00'` -> `2023-03-06` (the date as written, in the author's time zone)."""
    found = _PDF_DATE.match((value or "").strip())
    if not found:
        return None
    year, month, day = found.groups()
    return f"{year}-{month}-{day}" if "01" <= month <= "12" and "01" <= day <= "31" else None
