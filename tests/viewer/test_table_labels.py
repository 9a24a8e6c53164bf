"""Where a table passage's rows stand, as its context records it and its citation shows it; cells as formatted."""

from __future__ import annotations

from datetime import datetime

import pytest

from bot.citation_marks import citation_for
from bot.models import Chunk, TablePlace, table_context
from bot.viewer.numfmt import formatted


def table_chunk(context: str) -> Chunk:
    return Chunk(
        id="x", file="Invoices.xlsx.pdf", page=None, container="finance", text="a | b", context=context, tabular=True
    )


def test_the_last_sheet_and_rows_in_the_context_are_the_passages_own() -> None:
    place = TablePlace(sheet="Q1, rows 1-2", first_row=14, last_row=16)
    chunk = table_chunk(table_context("Invoices | sheet Old, rows 3-4", place))  # a title that looks like one
    assert chunk.table_place == place
    citation = citation_for(chunk, label=1, link_for=lambda _: None)
    assert citation.place == " · sheet Q1, rows 1-2, rows 14-16"
    one = table_chunk(table_context("Invoices", TablePlace(sheet="Credits", first_row=2, last_row=2)))
    assert citation_for(one, label=1, link_for=lambda _: None).place == " · sheet Credits, row 2"
    assert table_chunk("Invoices | sheet Credits").table_place is None  # indexed before rows were kept
    assert table_chunk("Invoices | sheet Credits, rows 2-3").model_copy(update={"tabular": False}).table_place is None


@pytest.mark.parametrize(
    ("value", "code", "shown"),
    [
        (1234.5, "#,##0.00", "1,234.50"),
        (1234.5, '"£"#,##0.00', "£1,234.50"),
        (-12, "#,##0;(#,##0)", "(12)"),
        (0.125, "0.0%", "12.5%"),
        (1234.5, "[$€-407] #,##0.00", "€ 1,234.50"),
        (3.0, "General", "3"),
        (datetime(2026, 3, 4, 15, 7), "dd/mm/yyyy", "04/03/2026"),
        (datetime(2026, 3, 4), "mmm d, yyyy", "Mar 4, 2026"),
        (datetime(2026, 3, 4, 15, 7), "h:mm AM/PM", "3:07 PM"),
        (datetime(2026, 3, 4), "General", "2026-03-04"),
        ("Bramblewood Timber Supplies", "@", "Bramblewood Timber Supplies"),
        (None, "0.00", ""),
        (True, None, "TRUE"),
    ],
)
def test_cells_read_as_the_workbook_formats_them(value: object, code: str | None, shown: str) -> None:
    assert formatted(value, code) == shown
