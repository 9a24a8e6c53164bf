"""Spreadsheets and CSV files as tables: sheets of rows, and passages of whole rows under their header.

A table read as loose text loses which number belongs to which column. Each passage here holds whole rows, the
header line first, so any passage can be read (or loaded into the code interpreter) on its own. `read_*` do the
file I/O (openpyxl for .xlsx; .xls and .ods come here after LibreOffice made an .xlsx of them); `table_passages`
is pure.
"""

from __future__ import annotations

import csv
import io
import sys
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from bot import messages
from bot.errors import TextTooLong, UnreadableFile
from bot.ingest.decoding import decode_text
from bot.ingest.readers import Sheet

TABLE_CHARS = 1500  # a passage's rows; one row longer than this stands alone
SEPARATOR = " | "
# The csv module refuses a field over 131,072 characters by default; the file's size is bounded before it is read
# (FOLIO_MAX_FILE_CHARS), and a long cell is text like any other.
csv.field_size_limit(sys.maxsize)


class TextLimit:
    """Counts the text a reader has taken and refuses the file as soon as it passes FOLIO_MAX_FILE_CHARS: cells are
    counted row by row as they are read, never all first (a small .xlsx may hold millions of cells)."""

    def __init__(self, name: str, limit: int | None) -> None:
        self.name = name
        self.limit = limit
        self.used = 0

    def take(self, chars: int) -> None:
        """Count `chars` more characters; TextTooLong when the file's text passes the limit."""
        self.used += chars
        if self.limit is not None and self.used > self.limit:
            raise TextTooLong(messages.file_too_long(self.name, self.limit))


def cell_text(value: object) -> str:
    """A cell as people write it: 12 not 12.0, dates as YYYY-MM-DD, text on one line."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0) else value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    return " ".join(str(value).split()).replace("|", "/")  # a `|` inside a cell would shift the columns


def make_sheet(name: str, rows: Iterable[Iterable[object]], limit: TextLimit | None = None) -> Sheet | None:
    """A Sheet of the non-empty rows, the first as header (blank header cells named `column N`); None when empty.
    With `limit`, each row's text is counted as it is read."""
    kept: list[list[str]] = []
    numbers: list[int] = []  # the row numbers a person sees in the workbook: blank rows are skipped, not renumbered
    for number, row in enumerate(rows, start=1):
        cells = [cell_text(value) for value in row]
        while cells and not cells[-1]:
            cells.pop()
        if limit is not None:  # an empty row counts one: a million of them is no small sheet
            limit.take(sum(len(cell) for cell in cells) + len(SEPARATOR) * max(len(cells) - 1, 0) + 1)
        if cells:
            kept.append(cells)
            numbers.append(number)
    if not kept:
        return None
    width = max(len(cells) for cells in kept)
    header = [cell or f"column {i + 1}" for i, cell in enumerate(kept[0] + [""] * (width - len(kept[0])))]
    body = tuple(tuple(cells + [""] * (width - len(cells))) for cells in kept[1:])
    return Sheet(name=name, header=tuple(header), rows=body, numbers=tuple(numbers[1:]))


@dataclass(frozen=True)
class RowPassage:
    """One table passage and the workbook rows it holds (first and last, as numbered in the workbook)."""

    text: str
    first_row: int
    last_row: int


def table_passages(sheet: Sheet, *, size: int = TABLE_CHARS) -> list[str]:
    """Whole rows, about `size` characters a passage, each passage starting with the header line."""
    return [passage.text for passage in row_passages(sheet, size=size)]


def row_passages(sheet: Sheet, *, size: int = TABLE_CHARS) -> list[RowPassage]:
    """`table_passages` with the workbook rows each holds (a sheet of a header alone: its header row, 1)."""
    header = SEPARATOR.join(sheet.header)
    numbers = sheet.numbers or tuple(range(2, len(sheet.rows) + 2))
    if not sheet.rows:
        return [RowPassage(header, 1, 1)]
    passages: list[RowPassage] = []
    current: list[str] = []
    first = previous = numbers[0]
    used = len(header)
    for row, number in zip(sheet.rows, numbers, strict=True):
        line = SEPARATOR.join(row)
        if current and used + len(line) + 1 > size:
            passages.append(RowPassage("\n".join([header, *current]), first, previous))
            current, used, first = [], len(header), number
        current.append(line)
        used += len(line) + 1
        previous = number
    passages.append(RowPassage("\n".join([header, *current]), first, previous))
    return passages


def read_xlsx(data: bytes, name: str, *, max_chars: int | None = None) -> tuple[Sheet, ...]:
    """Every worksheet with cells, in workbook order (values as last calculated, not formulas); TextTooLong as soon
    as the cells read pass `max_chars`."""
    # Imported here: only runs that meet a spreadsheet pay for it.
    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as exc:
        raise UnreadableFile(f"{name}: the spreadsheet cannot be read ({exc})") from exc
    limit = TextLimit(name, max_chars)
    try:
        sheets = (make_sheet(sheet.title, sheet.iter_rows(values_only=True), limit) for sheet in _worksheets(book))
        return tuple(sheet for sheet in sheets if sheet is not None)
    finally:
        book.close()


def _worksheets(book: Any) -> Iterator[Any]:
    for sheet in book.worksheets:
        if hasattr(sheet, "iter_rows"):  # chart sheets hold no cells
            yield sheet


def read_csv(
    data: bytes, name: str, *, sheet: str, max_chars: int | None = None
) -> tuple[tuple[Sheet, ...], tuple[str, ...]]:
    """The one table of a CSV file (comma, semicolon, tab or `|` separated), and a note when not UTF-8."""
    decoded = decode_text(data)
    if decoded is None:
        raise UnreadableFile(messages.NOT_TEXT.format(name=name))
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(decoded.text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    table = make_sheet(sheet, csv.reader(io.StringIO(decoded.text), dialect), TextLimit(name, max_chars))
    notes = () if decoded.encoding == "UTF-8" else (messages.read_as(name, decoded.encoding),)
    return ((table,) if table else ()), notes


def sheet_chars(sheets: Iterable[Sheet]) -> int:
    """How many characters the tables' text holds (for FOLIO_MAX_FILE_CHARS)."""
    return sum(len(SEPARATOR.join(row)) + 1 for sheet in sheets for row in (sheet.header, *sheet.rows))
