"""Issue 35, tables: a spreadsheet or CSV citation names its sheet and rows, each sheet's rows get their own [n], and
the viewer shows the sheet as an HTML table with the header and the cited rows highlighted, cells as the workbook
formats them."""

from __future__ import annotations

import re
import shutil
from datetime import date
from html import unescape
from pathlib import Path

import pytest

from bot import messages
from bot.citations import render
from bot.slack.render import source_line
from tests.viewer.site import indexed_site

SUPPLIERS = ["Bramblewood Timber Supplies", "Acme", "Cobalt Freight", "Dunmore Paper"]


def invoices(path: Path) -> Path:
    """`Supplier Invoices 2026.xlsx`: sheet Invoices (dates as dd/mm/yyyy, amounts as #,##0.00), sheet Credits."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Invoices"
    sheet.append(["Supplier", "Invoice date", "Amount"])
    for number in range(2, 40):
        sheet.append([SUPPLIERS[number % 4], date(2026, 1 + number % 12, 1 + number % 27), 1000 + number * 37.5])
        sheet.cell(row=number, column=2).number_format = "dd/mm/yyyy"
        sheet.cell(row=number, column=3).number_format = "#,##0.00"
    credits = book.create_sheet("Credits")
    credits.append(["Supplier", "Credit"])
    credits.append(["Bramblewood Timber Supplies", 412])
    book.save(path)
    return path


def rows_of(page: str) -> dict[int, tuple[bool, list[str]]]:
    """Each shown row's number -> (cited, its cells as text)."""
    found = {}
    for attributes, cells in re.findall(r"<tr( class=cited)?>(.*?)</tr>", page):
        values = [unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", cells)]
        found[int(values[0].split()[0])] = (bool(attributes), values[1:])
    return found


async def test_a_csv_citation_names_its_rows_and_its_view_highlights_them(tmp_path: Path) -> None:
    stock = tmp_path / "stock.csv"
    stock.write_text("Item;Stock\n\nStaplers;14\nToner;3\n", encoding="utf-8")  # a blank line: rows keep their number
    async with indexed_site([stock], tmp_path / "data") as site:
        chunk = await site.chunk("toner stock", "stock.csv")
        rendered = render("Toner: 3 [S1].", {"S1": chunk}, link_for=site.links.link_for)
        [citation] = rendered.citations
        assert "> · sheet stock, rows 3-4 · office · updated " in source_line(citation)
        status, headers, page = await site.get(citation.url or "")
    page = page.decode()
    assert (status, headers["Content-Security-Policy"].startswith("default-src 'none'")) == (200, True)
    shown = rows_of(page)
    assert shown[1] == (False, ["Item", "Stock"])  # the header, in the table's head
    assert shown[3] == (True, ["Staplers", "14"]) and shown[4] == (True, ["Toner", "3"])
    assert '<thead><tr><th scope="col">1</th>' in page


@pytest.mark.slow
async def test_a_workbook_citation_names_sheet_and_rows_and_shows_cells_as_formatted(tmp_path: Path) -> None:
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice is not installed (apt-get install libreoffice-calc-nogui)")
    book = invoices(tmp_path / "Supplier Invoices 2026.xlsx")
    async with indexed_site([book], tmp_path / "data") as site:
        invoice = await site.chunk("Bramblewood invoice amount", "Supplier Invoices 2026.xlsx.pdf")
        credit = await site.chunk("Bramblewood credit 412", "Supplier Invoices 2026.xlsx.pdf")
        assert credit.text.startswith("Supplier | Credit")
        rendered = render("Owed [S1], credited [S2].", {"S1": invoice, "S2": credit}, link_for=site.links.link_for)
        first, second = rendered.citations
        assert (first.label, second.label) == (1, 2)  # each sheet's rows: a [n] of their own
        assert first.rows is not None and first.rows.startswith("sheet Invoices, rows 2-")
        assert second.rows == "sheet Credits, row 2"
        assert re.search(
            r"\|Supplier Invoices 2026\.xlsx> · sheet Invoices, rows 2-\d+ · office · updated ", source_line(first)
        )
        _, _, page = await site.get(first.url or "")
    shown = rows_of(page.decode())
    assert shown[1] == (False, ["Supplier", "Invoice date", "Amount"])
    cited = {number: cells for number, (is_cited, cells) in shown.items() if is_cited}
    assert cited[14] == ["Cobalt Freight", "15/03/2026", "1,525.00"]  # as the workbook shows it: no ###, no cut name
    assert cited[5] == ["Acme", "06/06/2026", "1,187.50"]
    assert messages.VIEWER_ROWS_GONE not in page.decode()
