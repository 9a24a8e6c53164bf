"""`folio index` of a folder holding one file of each kind, with LibreOffice and OCRmyPDF for real; then questions whose
answer is only in the slides, only in the spreadsheet, only in the scanned page, answered with a citation that opens
the right page of the kept PDF.

The folder is indexed once per session (each LibreOffice conversion costs seconds); each test works on a copy.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from pypdf import PdfReader

from bot.cli import main
from tests.ingest import made_files

# LibreOffice, OCRmyPDF and Tesseract convert the fixture: `python3 dev.py test --quick` skips it
pytestmark = pytest.mark.slow

WHY_NOT = {
    "soffice": "LibreOffice is not installed (apt-get install libreoffice-writer-nogui libreoffice-impress-nogui "
    "libreoffice-calc-nogui)",
    "ocrmypdf": "OCRmyPDF is not installed (apt-get install ocrmypdf tesseract-ocr tesseract-ocr-eng)",
    "tesseract": "Tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)",
}


@pytest.fixture(scope="session")
def office_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A folder of every kind indexed by `folio index` into container `office`: (data folder, stdout, stderr)."""
    for program, why in WHY_NOT.items():
        if shutil.which(program) is None:
            pytest.skip(why)
    root = tmp_path_factory.mktemp("office")
    folder = root / "shared-drive"
    folder.mkdir()
    for make, name in (
        (made_files.docx, "report.docx"),
        (made_files.pptx, "deck.pptx"),
        (made_files.xlsx, "orders.xlsx"),
        (made_files.odt, "safety.odt"),
        (made_files.scan, "scan.pdf"),
        (made_files.html, "guide.html"),
        (made_files.eml, "offer.eml"),
        (made_files.csv, "stock.csv"),
    ):
        make(folder / name)
    (folder / "broken.docx").write_bytes(b"PK\x03\x04 this is no zip")
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.chdir(root)
        patch.setenv("FOLIO_DATA_DIR", str(root / ".folio"))
        patch.setenv("FOLIO_SAMPLE_CORPUS", "false")
        code = main(["index", str(folder), "--container", "office"])
    assert code == 1, (out.getvalue(), err.getvalue())  # broken.docx failed, by name
    return root / ".folio", out.getvalue(), err.getvalue()


@pytest.fixture
def folio(office_run: tuple[Path, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the session's data folder, as FOLIO_DATA_DIR, no model: answers are quoted passages."""
    data = tmp_path / ".folio"
    shutil.copytree(office_run[0], data, ignore=shutil.ignore_patterns("*.sock", "redis*"))
    monkeypatch.setenv("FOLIO_DATA_DIR", str(data))
    monkeypatch.setenv("FOLIO_SAMPLE_CORPUS", "false")
    yield data


def ask(capsys: pytest.CaptureFixture[str], question: str) -> dict:
    assert main(["ask", question, "--container", "office", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def page_text(url: str) -> str:
    """The text of the page a citation link opens: file:///.../deck.pptx.pdf#page=2."""
    parts = urlsplit(url)
    assert parts.scheme == "file" and parts.fragment.startswith("page=")
    return PdfReader(unquote(parts.path)).pages[int(parts.fragment.removeprefix("page=")) - 1].extract_text()


def test_every_kind_is_indexed_or_named_with_why_not(office_run: tuple[Path, str, str]) -> None:
    _, out, err = office_run
    assert out.startswith("9 files indexed") and "0 unchanged, 1 failed" in out
    assert (
        "folio: not indexed: broken.docx: LibreOffice could not convert it (Error: source file could not be loaded); "
        "open it in an office program and save it again\n"
    ) in err
    assert "folio: note: scan.pdf: 1 page read by OCR" in err


def test_list_shows_each_file_by_the_name_people_know_and_how_it_was_read(
    folio: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", "--container", "office", "--json"]) == 0
    files = {held["file"]: (held["pages"], held["read"]) for held in json.loads(capsys.readouterr().out)}
    assert files == {
        "deck.pptx": (2, "LibreOffice"),
        "guide.html": (None, "web page"),
        "offer - terms.txt": (None, None),
        "offer.eml": (None, "mail"),
        "orders.xlsx": (None, "LibreOffice, tables"),
        "report.docx": (2, "LibreOffice"),
        "safety.odt": (1, "LibreOffice"),
        "scan.pdf": (1, "OCR (1 page)"),
        "stock.csv": (None, "table"),
    }


def test_a_fact_only_in_the_slides_is_cited_at_its_slide(folio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = ask(capsys, "How far did quarterly churn fall in the Nordic region?")

    first = answer["citations"][0]
    assert (first["file"], first["title"], first["page"]) == ("deck.pptx.pdf", "deck.pptx", 2)
    assert first["url"].endswith("/office/deck.pptx.pdf#page=2")
    assert made_files.PPTX_FACT in " ".join(page_text(first["url"]).split())
    assert "3.2 percent" in answer["answer"]


def test_a_fact_only_in_the_spreadsheet_is_cited_as_a_table(folio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = ask(capsys, "How many Sprocket units were ordered in the East region?")

    first = answer["citations"][0]
    assert (first["file"], first["title"], first["page"]) == ("orders.xlsx.pdf", "orders.xlsx", None)
    assert first["url"].endswith("/office/orders.xlsx.pdf")  # a table opens at the top: it has no page of its own
    assert "East | Sprocket | 42 | 7.25" in answer["answer"]
    assert main(["search", "Sprocket East units", "--container", "office", "--json"]) == 0
    hit = json.loads(capsys.readouterr().out)[0]
    assert hit["text"] == (
        "Region | Product | Units | Unit price\nNorth | Widget | 120 | 2.5\nSouth | Widget | 80 | 2.5\n"
        "North | Gadget | 15 | 19.99\nEast | Sprocket | 42 | 7.25\nWest | Gadget | 30 | 19.99"
    )
    assert hit["context"] == "orders.xlsx | sheet Orders, rows 2-6" and hit["tabular"] is True  # where its rows stand


def test_a_fact_only_in_the_scanned_page_is_found_by_ocr(folio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = ask(capsys, "Where is the boiler room key kept?")

    first = answer["citations"][0]
    assert (first["file"], first["page"]) == ("scan.pdf", 1)
    assert "caretaker" in page_text(first["url"])  # the kept copy is the OCR'd PDF: its page has the text layer


def test_a_word_document_keeps_its_pages(folio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = ask(capsys, "How much does the parking permit cost a month?")

    first = answer["citations"][0]
    assert (first["file"], first["title"], first["page"]) == ("report.docx.pdf", "report.docx", 2)
    assert made_files.DOCX_FACT in page_text(first["url"])
    odt = ask(capsys, "Where is the fire assembly point?")["citations"][0]
    assert (odt["title"], odt["page"]) == ("safety.odt", 1)


def test_doctor_shows_each_converter_its_version_and_the_ocr_languages(
    office_run: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    main(["doctor", "--json"])

    [check] = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["part"] == "converters"]
    assert check["status"] == "ok"
    assert re.fullmatch(
        r"LibreOffice \d+\.\d+[^;]*; OCRmyPDF \d+\.\d+[^;]*; Tesseract \d+\.\d+[^;]*; "
        r"OCR auto, languages (\w+, )*eng[^;]*; converters run with "
        r"(no network \(a namespace of their own\)|a proxy to nowhere \(no namespace here\))",
        check["summary"],
    ), check["summary"]
    assert "eng" in check["facts"]["ocr_languages"]
    network = "none" if "no network" in check["summary"] else "proxy to nowhere"  # as this system allows
    assert check["facts"]["converters_network"] == network


def test_an_ocr_language_without_its_data_skips_the_scan_naming_the_package(
    office_run: tuple[Path, str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FOLIO_OCR_LANGUAGES", "eng+xqz")  # no Tesseract data is called xqz
    made_files.scan(tmp_path / "scan.pdf")

    assert main(["index", str(tmp_path / "scan.pdf"), "--container", "scans"]) == 0

    assert capsys.readouterr().out.endswith(
        "skipped 1: scan.pdf (needs Tesseract language data: apt-get install tesseract-ocr-xqz).\n"
    )


def test_a_conversion_past_its_timeout_is_stopped_and_reported(
    office_run: tuple[Path, str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FOLIO_CONVERT_TIMEOUT", "0.2")  # LibreOffice cannot even start in that time
    made_files.odt(tmp_path / "safety.odt")

    assert main(["index", str(tmp_path / "safety.odt"), "--container", "slow"]) == 1

    assert capsys.readouterr().err.endswith(
        "folio: not indexed: safety.odt: LibreOffice took longer than 0.2 s and was stopped (FOLIO_CONVERT_TIMEOUT); "
        "save it again or split it, or raise the limit\n"
    )


def test_a_blank_page_of_a_text_pdf_starts_no_ocr(
    office_run: tuple[Path, str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.cell(text="The library closes at six on Fridays.")
    pdf.add_page()  # "this page intentionally left blank", without the words
    pdf.output(str(tmp_path / "hours.pdf"))

    assert main(["index", str(tmp_path / "hours.pdf"), "--container", "text"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("1 file indexed (2 pages, 1 passage)") and "note" not in captured.err
    assert main(["list", "--container", "text", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["read"] is None  # read as itself: OCR never ran
