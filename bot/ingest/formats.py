"""Any supported file -> a Document, by its kind (see `kinds`): the one place that says how each kind is read.

    document = read_file(Path("deck.pptx"), converters=Converters())   # deck.pptx.pdf, one page a slide

Blocking; the pipeline calls it in a worker thread. PDFs (given or converted) whose pages have no text layer are
OCR'd when OCR is on; a file whose pages still hold no text is reported, never indexed silently empty. A file whose
program is missing raises MissingConverter (skipped, with the package to install).
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
from dataclasses import replace
from datetime import date
from pathlib import Path, PurePath

from bot import messages
from bot.errors import MissingConverter, TextTooLong, UnreadableFile
from bot.ingest import kinds
from bot.ingest.convert import convert
from bot.ingest.converters import Converters
from bot.ingest.decoding import decode_text
from bot.ingest.html import page_text
from bot.ingest.legibility import legible
from bot.ingest.mail import read_mail
from bot.ingest.ocr import ocr_pdf, ocr_picture, pages_with_pictures
from bot.ingest.packages import MEGABYTE, unpacked_bytes
from bot.ingest.readers import Document, Page, read_document
from bot.ingest.tables import TextLimit, read_csv, read_xlsx, sheet_chars
from bot.models import display_name, file_title

DEFAULT = Converters()
log = logging.getLogger(__name__)


def read_file(path: Path, *, max_chars: int | None = None, converters: Converters = DEFAULT) -> Document:
    """Read `path` as its kind says; UnreadableFile (or MissingConverter) naming the file and why not."""
    kind = kinds.suffix(path.name)
    if kind in kinds.PDF:
        return _with_ocr(read_document(path, max_chars=max_chars), path, converters, max_chars)
    if kind in kinds.TEXT:
        return read_document(path, max_chars=max_chars)
    if kind in kinds.OFFICE:
        return _read_office(path, converters, max_chars)
    if kind in kinds.PICTURES:
        return _read_picture(path, converters, max_chars)
    if kind in kinds.CSV | kinds.WEB | kinds.MAIL:
        data, digest, modified = _source(path, max_chars)
        if kind in kinds.CSV:
            return _read_csv(path.name, data, digest, modified, max_chars)
        if kind in kinds.WEB:
            return _read_web(path.name, data, digest, modified, max_chars)
        return _read_mail(path.name, data, digest, modified, converters, max_chars)
    raise UnreadableFile(f"{path.name}: not a type Folio reads")


def _source(path: Path, max_chars: int | None) -> tuple[bytes, str, str]:
    """The file's bytes, their hash and its modification date."""
    try:
        status = path.stat()
        text_only = kinds.suffix(path.name) in kinds.CSV | kinds.WEB  # a mail's bytes hold its attachments' too
        if max_chars is not None and status.st_size > 4 * max_chars and text_only:
            raise TextTooLong(messages.file_too_long(path.name, max_chars))  # no encoding packs more in a byte
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(f"{path.name}: cannot be read ({exc.strerror or exc})") from exc
    return data, hashlib.sha256(data).hexdigest(), date.fromtimestamp(status.st_mtime).isoformat()


# --- PDFs and OCR ---------------------------------------------------------------------------------------------------
def _with_ocr(document: Document, pdf: Path, converters: Converters, max_chars: int | None) -> Document:
    """`document` (read from `pdf`) with its text-less pages OCR'd when OCR is on; reported when pages stay empty.

    A page without text that draws no picture is blank (a text PDF's "intentionally left blank" page): it alone
    never starts OCR, and is never reported; a document with no text at all is OCR'd whatever its pages draw
    (its text may be drawn as outlines)."""
    empty = [page.number for page in document.pages if page.number is not None and not page.text.strip()]
    scanned = empty if len(empty) == len(document.pages) else sorted(pages_with_pictures(pdf, empty) if empty else ())
    if not converters.ocr_on() or not (scanned or converters.ocr == "force"):
        return _checked(document, len(scanned), ocr_ran=False)
    pages = len(document.pages) if converters.ocr == "force" else len(scanned)
    data = ocr_pdf(pdf, document.file, converters, pages=pages)
    with tempfile.TemporaryDirectory(prefix="folio-ocr-read-") as work:
        done = Path(work) / document.file
        done.write_bytes(data)
        redone = read_document(done, max_chars=max_chars)
    ocrd = replace(
        document,
        pages=redone.pages,
        copy=data,
        read=f"OCR ({pages} page{'s' if pages != 1 else ''})",
        notes=(*document.notes, messages.read_by_ocr(display_name(document.file), pages)),
    )
    read: set[int | None] = set(scanned) if converters.ocr != "force" else {page.number for page in ocrd.pages}
    ocrd = _without_garbage(ocrd, read)
    still = sum(1 for page in ocrd.pages if page.number in scanned and not page.text.strip())
    return _checked(ocrd, still, ocr_ran=True)


def _without_garbage(document: Document, ocrd: set[int | None]) -> Document:
    """`document` with the text of each OCR'd page that reads as garbage left out, and a note naming those pages;
    UnreadableFile when no page with text is left (see legibility.py)."""
    garbled = [page.number for page in document.pages if page.number in ocrd and not legible(page.text)]
    if not garbled:
        return document
    name = display_name(document.file)
    pages = tuple(replace(page, text="") if page.number in garbled else page for page in document.pages)
    if not any(page.text.strip() for page in pages):
        raise UnreadableFile(messages.illegible_document(name))
    note = messages.illegible_pages(name, [number for number in garbled if number is not None])
    return replace(document, pages=pages, notes=(*document.notes, note))


def _checked(document: Document, blank: int, *, ocr_ran: bool) -> Document:
    """Refuse a document without any text; note the pages without text of one that has some."""
    if not blank:
        return document
    said = messages.no_text_after_ocr if ocr_ran else messages.pages_without_text
    name = display_name(document.file)
    if blank == len(document.pages):
        raise UnreadableFile(said(name, blank))
    return replace(document, notes=(*document.notes, said(name, blank)))


# --- Office files through LibreOffice -------------------------------------------------------------------------------
def _read_office(path: Path, converters: Converters, max_chars: int | None) -> Document:
    data, digest, modified = _source(path, max_chars)
    if kinds.suffix(path.name) in kinds.OOXML and _encrypted_ooxml(data):  # whatever is installed: no reading it
        raise UnreadableFile(messages.password_protected(path.name))
    unpacked = unpacked_bytes(data)
    if unpacked is not None and unpacked > converters.unpacked_mb * MEGABYTE:  # before openpyxl or LibreOffice
        raise UnreadableFile(messages.unpacks_too_large(path.name, unpacked, converters.unpacked_mb))
    package = converters.missing(path.name)
    if package:
        raise MissingConverter(messages.needs_converter(path.name, "LibreOffice", package))
    if kinds.suffix(path.name) in kinds.CALC:
        return _read_spreadsheet(path, data, digest, modified, converters, max_chars)
    pdf = convert(path, "pdf", converters)
    with tempfile.TemporaryDirectory(prefix="folio-office-") as work:
        canonical = Path(work) / kinds.stored_name(path.name)  # report.docx.pdf, as it is indexed
        canonical.write_bytes(pdf)
        read = read_document(canonical, max_chars=max_chars)
        if _blank(read, canonical):  # OCR would find nothing either: say what it is
            raise UnreadableFile(messages.empty_document(path.name))
        # The conversion's own dates say when it ran: the document's date is the original file's.
        document = replace(
            read, content_hash=digest, metadata_date=None, modified_date=modified, copy=pdf, read="LibreOffice"
        )
        return _with_ocr(document, canonical, converters, max_chars)


# An Office file saved with a password is no zip package but an OLE compound file whose one stream is the encrypted
# package (MS-OFFCRYPTO 2.3.4.4): its directory names the stream `EncryptedPackage`, in UTF-16.
_OLE_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")


def _encrypted_ooxml(data: bytes) -> bool:
    return data.startswith(_OLE_MAGIC) and _ENCRYPTED_PACKAGE in data


def _blank(document: Document, pdf: Path) -> bool:
    """Whether a converted document has no text on any page and no picture to OCR either (an empty document)."""
    numbers = [page.number for page in document.pages if page.number is not None]
    if any(page.text.strip() for page in document.pages):
        return False
    return not pages_with_pictures(pdf, numbers)


# --- pictures through OCR -------------------------------------------------------------------------------------------
def _read_picture(path: Path, converters: Converters, max_chars: int | None) -> Document:
    """A PNG, JPEG or TIFF: OCR'd into a PDF of its own (one page a TIFF page), kept as `<name>.pdf`."""
    if converters.ocr == "off":
        raise MissingConverter(messages.picture_without_ocr(path.name))
    _, digest, modified = _source(path, max_chars)
    pdf = ocr_picture(path, path.name, converters)
    with tempfile.TemporaryDirectory(prefix="folio-picture-") as work:
        canonical = Path(work) / kinds.stored_name(path.name)
        canonical.write_bytes(pdf)
        read = read_document(canonical, max_chars=max_chars)
    pages = len(read.pages)
    document = replace(
        read,
        title=file_title(path.name),
        content_hash=digest,
        metadata_date=None,
        modified_date=modified,
        copy=pdf,
        read=f"OCR ({pages} page{'s' if pages != 1 else ''})",
    )
    document = _without_garbage(document, {page.number for page in document.pages})
    blank = sum(1 for page in document.pages if not page.text.strip())
    return _checked(document, blank, ocr_ran=True)


def _read_spreadsheet(
    path: Path, data: bytes, digest: str, modified: str, converters: Converters, max_chars: int | None
) -> Document:
    """The sheets' cells as tables (.xls and .ods through an .xlsx LibreOffice makes), and a PDF as the kept copy."""
    workbook = data if kinds.suffix(path.name) == ".xlsx" else convert(path, "xlsx", converters)
    sheets = read_xlsx(workbook, path.name, max_chars=max_chars)
    if max_chars is not None and sheet_chars(sheets) > max_chars:
        raise TextTooLong(messages.file_too_long(path.name, max_chars))
    stored = kinds.stored_name(path.name)
    return Document(
        file=stored,
        title=file_title(stored),
        pages=(),
        content_hash=digest,
        metadata_date=None,
        modified_date=modified,
        tabular=True,
        copy=convert(path, "pdf", converters),
        sheets=sheets,
        workbook=workbook,
        read="LibreOffice, tables",
    )


# --- tables, web pages and mail -------------------------------------------------------------------------------------
def _read_csv(name: str, data: bytes, digest: str, modified: str, max_chars: int | None) -> Document:
    sheets, notes = read_csv(data, name, sheet=file_title(name), max_chars=max_chars)
    if max_chars is not None and sheet_chars(sheets) > max_chars:
        raise TextTooLong(messages.file_too_long(name, max_chars))
    return Document(
        file=name,
        title=file_title(name),
        pages=(),
        content_hash=digest,
        metadata_date=None,
        modified_date=modified,
        tabular=True,
        notes=notes,
        sheets=sheets,
        read="table",
    )


def _text_of(name: str, data: bytes, max_chars: int | None) -> tuple[str, tuple[str, ...]]:
    decoded = decode_text(data)
    if decoded is None:
        raise UnreadableFile(messages.NOT_TEXT.format(name=name))
    if max_chars is not None and len(decoded.text) > max_chars:
        raise TextTooLong(messages.file_too_long(name, max_chars))
    return decoded.text, (() if decoded.encoding == "UTF-8" else (messages.read_as(name, decoded.encoding),))


def _read_web(name: str, data: bytes, digest: str, modified: str, max_chars: int | None) -> Document:
    markup, notes = _text_of(name, data, max_chars)
    page = page_text(markup)
    return Document(
        file=kinds.stored_name(name),
        title=page.title or name,
        pages=(Page(number=None, text=page.text),),
        content_hash=digest,
        metadata_date=None,
        modified_date=modified,
        tabular=False,
        notes=notes,
        copy=page.text.encode("utf-8"),
        read="web page",
    )


def _read_mail(
    name: str, data: bytes, digest: str, modified: str, converters: Converters, max_chars: int | None
) -> Document:
    mail = read_mail(data)
    limit = TextLimit(name, max_chars)  # one limit for the mail and its attachments together
    limit.take(len(mail.text))
    parts, notes = _attachments(name, mail.attachments, mail.date or modified, converters, limit)
    return Document(
        file=kinds.stored_name(name),
        title=mail.subject or name,
        pages=(Page(number=None, text=mail.text),),
        content_hash=digest,
        metadata_date=mail.date,
        modified_date=modified,
        tabular=False,
        notes=notes,
        copy=mail.text.encode("utf-8"),
        parts=parts,
        read="mail",
    )


def _attachments(
    mail: str, attachments: tuple[tuple[str, bytes], ...], day: str, converters: Converters, limit: TextLimit
) -> tuple[tuple[Document, ...], tuple[str, ...]]:
    """Each attachment read as a file named `<mail's stem> - <attachment>` (two mails' invoice.pdf stay apart; a
    second invoice.pdf of one mail is `<stem> - invoice (2).pdf`), within what is left of the mail's text limit."""
    parts: list[Document] = []
    notes: list[str] = []
    named: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="folio-mail-") as work:
        for attachment, data in attachments:
            if kinds.suffix(attachment) not in kinds.SUPPORTED - kinds.MAIL:
                notes.append(messages.attachment_of(mail, attachment, "not a type Folio reads"))
                continue
            stored = kinds.free_name(kinds.safe_name(f"{PurePath(mail).stem} - {attachment}"), named)
            named.add(stored)
            path = Path(work) / kinds.original_name(stored)
            path.write_bytes(data)
            left = None if limit.limit is None else max(limit.limit - limit.used, 0)
            try:
                part = read_or_fail(path, max_chars=left, converters=converters)
            except TextTooLong as exc:  # the mail's text with its attachments' passes the limit: the whole mail
                raise TextTooLong(messages.file_too_long(mail, limit.limit or 0)) from exc
            except UnreadableFile as exc:  # MissingConverter too: the mail itself is still indexed
                notes.append(messages.attachment_of(mail, attachment, str(exc).removeprefix(f"{path.name}: ")))
                continue
            limit.take(document_chars(part))
            # The temporary file is gone when the pipeline keeps copies: the part carries its own bytes.
            parts.append(replace(part, copy=part.copy if part.copy is not None else data, modified_date=day))
    return tuple(parts), tuple(notes)


def document_chars(document: Document) -> int:
    """How many characters of text a read document holds (its pages, or its tables)."""
    return sum(len(page.text) for page in document.pages) + sheet_chars(document.sheets)


def read_or_fail(path: Path, *, max_chars: int | None = None, converters: Converters = DEFAULT) -> Document:
    """`read_file`, with any error a reader raises (a library's surprise on a damaged file, a bug of ours) turned
    into UnreadableFile naming the file: one odd file fails alone, and the run goes on to the next."""
    try:
        return read_file(path, max_chars=max_chars, converters=converters)
    except UnreadableFile:
        raise
    except Exception as exc:  # noqa: BLE001 - any exception: that is the point
        log.debug("reading %s failed", path.name, exc_info=True)  # the traceback, for a bug report (FOLIO_LOG_LEVEL)
        raise UnreadableFile(messages.reader_failed(path.name, exc)) from exc
