"""The rows of a kept spreadsheet or CSV file around the cited ones, cells as the workbook shows them. Blocking.

Only the rows shown are read (openpyxl streams a sheet in read-only mode), never more than `CONTEXT_ROWS` around the
cited ones nor more than `MAX_ROWS` and `MAX_COLUMNS`, so a workbook of a million rows costs what a short one costs.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.viewer.numfmt import formatted
from bot.viewer.text import kept_text

CONTEXT_ROWS = 10  # rows shown before and after the cited ones
MAX_ROWS = 200
MAX_COLUMNS = 40
MAX_CELL = 300  # characters of one cell
MAX_CSV_BYTES = 64 * 1024 * 1024


class TableUnreadable(Exception):
    """The kept workbook cannot be read, or has no sheet of that name."""


@dataclass(frozen=True)
class Row:
    number: int  # as the workbook numbers it
    cells: tuple[str, ...]
    cited: bool


@dataclass(frozen=True)
class Table:
    """A window of one sheet: its header row, and the rows around the cited ones."""

    sheet: str
    header: Row | None
    rows: tuple[Row, ...]
    columns: int


def read_table(path: Path, *, sheet: str, rows: tuple[int, int], csv_file: bool) -> Table:
    """The sheet `sheet` of the workbook at `path` (or the one table of a CSV file), around rows `rows`."""
    first, last = rows
    start, stop = max(1, first - CONTEXT_ROWS), min(last + CONTEXT_ROWS, first - CONTEXT_ROWS + MAX_ROWS)
    if csv_file:
        return _window(sheet, _csv_rows(path, stop), rows, start)
    return _window(sheet, _xlsx_rows(path, sheet, stop), rows, start)


def _window(sheet: str, found: Iterable[tuple[int, Sequence[str]]], rows: tuple[int, int], start: int) -> Table:
    header: Row | None = None
    shown: list[Row] = []
    for number, cells in found:
        cells = tuple(cell[:MAX_CELL] for cell in cells[:MAX_COLUMNS])
        if not any(cells):
            continue
        if header is None:
            header = Row(number=number, cells=cells, cited=False)  # the first row with cells, as ingest reads it
        elif number >= start:
            shown.append(Row(number=number, cells=cells, cited=rows[0] <= number <= rows[1]))
    columns = max((len(row.cells) for row in (*([header] if header else []), *shown)), default=0)
    return Table(sheet=sheet, header=header, rows=tuple(shown), columns=columns)


def _xlsx_rows(path: Path, sheet: str, stop: int) -> Iterable[tuple[int, Sequence[str]]]:
    from openpyxl import load_workbook  # only a table view pays for it

    try:
        handle = path.open("rb")  # kept as `<name>.xlsx.pdf`: openpyxl judges a path by its suffix, a file it reads
    except OSError as exc:
        raise TableUnreadable(str(exc)) from exc
    try:
        book = load_workbook(handle, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as exc:
        handle.close()
        raise TableUnreadable(str(exc)) from exc
    try:
        if sheet not in book.sheetnames or not hasattr(book[sheet], "iter_rows"):
            raise TableUnreadable(f"no sheet {sheet!r}")
        table = book[sheet]
        found = []
        for number, row in enumerate(table.iter_rows(min_row=1, max_row=stop), start=1):
            found.append((number, tuple(formatted(cell.value, getattr(cell, "number_format", None)) for cell in row)))
        return found
    finally:
        book.close()
        handle.close()


def _csv_rows(path: Path, stop: int) -> Iterable[tuple[int, Sequence[str]]]:
    text = kept_text(path, limit=MAX_CSV_BYTES)
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    found = []
    for number, row in enumerate(csv.reader(io.StringIO(text), dialect), start=1):
        if number > stop:
            break
        found.append((number, tuple(" ".join(cell.split()) for cell in row)))
    return found
