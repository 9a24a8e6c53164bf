"""Spreadsheets and CSV files as tables: sheets of rows, and passages of whole rows under their header.

A table read as loose text loses which number belongs to which column. Each passage here holds whole rows, the
header line first, so any passage can be read (or loaded into the code interpreter) on its own. `read_*` do the
file I/O (openpyxl for .xlsx; .xls and .ods come here after LibreOffice made an .xlsx of them); `table_passages`
is pure.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterable, Iterator
from datetime import date, datetime, time
from typing import Any

from bot import messages
from bot.errors import UnreadableFile
from bot.ingest.decoding import decode_text
from bot.ingest.readers import Sheet

TABLE_CHARS = 1500  # a passage's rows; one row longer than this stands alone
SEPARATOR = " | "


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


def make_sheet(name: str, rows: Iterable[Iterable[object]]) -> Sheet | None:
    """A Sheet of the non-empty rows, the first as header (blank header cells named `column N`); None when empty."""
    kept: list[list[str]] = []
    for row in rows:
        cells = [cell_text(value) for value in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            kept.append(cells)
    if not kept:
        return None
    width = max(len(cells) for cells in kept)
    header = [cell or f"column {i + 1}" for i, cell in enumerate(kept[0] + [""] * (width - len(kept[0])))]
    body = tuple(tuple(cells + [""] * (width - len(cells))) for cells in kept[1:])
    return Sheet(name=name, header=tuple(header), rows=body)


def table_passages(sheet: Sheet, *, size: int = TABLE_CHARS) -> list[str]:
    """Whole rows, about `size` characters a passage, each passage starting with the header line."""
    header = SEPARATOR.join(sheet.header)
    if not sheet.rows:
        return [header]
    passages: list[str] = []
    current: list[str] = []
    used = len(header)
    for row in sheet.rows:
        line = SEPARATOR.join(row)
        if current and used + len(line) + 1 > size:
            passages.append("\n".join([header, *current]))
            current, used = [], len(header)
        current.append(line)
        used += len(line) + 1
    passages.append("\n".join([header, *current]))
    return passages


def read_xlsx(data: bytes, name: str) -> tuple[Sheet, ...]:
    """Every worksheet with cells, in workbook order (values as last calculated, not formulas)."""
    # Imported here: only runs that meet a spreadsheet pay for it.
    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as exc:
        raise UnreadableFile(f"{name}: the spreadsheet cannot be read ({exc})") from exc
    try:
        sheets = (make_sheet(sheet.title, sheet.iter_rows(values_only=True)) for sheet in _worksheets(book))
        return tuple(sheet for sheet in sheets if sheet is not None)
    finally:
        book.close()


def _worksheets(book: Any) -> Iterator[Any]:
    for sheet in book.worksheets:
        if hasattr(sheet, "iter_rows"):  # chart sheets hold no cells
            yield sheet


def read_csv(data: bytes, name: str, *, sheet: str) -> tuple[tuple[Sheet, ...], tuple[str, ...]]:
    """The one table of a CSV file (comma, semicolon, tab or `|` separated), and a note when not UTF-8."""
    decoded = decode_text(data)
    if decoded is None:
        raise UnreadableFile(messages.NOT_TEXT.format(name=name))
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(decoded.text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    table = make_sheet(sheet, csv.reader(io.StringIO(decoded.text), dialect))
    notes = () if decoded.encoding == "UTF-8" else (messages.read_as(name, decoded.encoding),)
    return ((table,) if table else ()), notes


def sheet_chars(sheets: Iterable[Sheet]) -> int:
    """How many characters the tables' text holds (for FOLIO_MAX_FILE_CHARS)."""
    return sum(len(SEPARATOR.join(row)) + 1 for sheet in sheets for row in (sheet.header, *sheet.rows))
