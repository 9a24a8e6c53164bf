"""Web pages, mail, CSV tables and missing converters, through `folio index` and `folio search` (no LibreOffice or
OCR run here: see test_office_and_scans.py for those)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from bot.cli import main
from bot.ingest.readers import Sheet
from bot.ingest.tables import table_passages
from tests.ingest import made_files

MISSING = "/nonexistent/bin/{}"  # a converter path that names no program: the "not installed" case, for real


def search(capsys: pytest.CaptureFixture[str], query: str, container: str = "docs") -> list[dict]:
    assert main(["search", query, "--container", container, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def index(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["index", *args, "--container", "docs"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def listed(capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:
    assert main(["list", "--container", "docs", "--json"]) == 0
    return {held["file"]: held for held in json.loads(capsys.readouterr().out)}


def test_a_web_page_is_its_text_with_headings_and_no_script_or_style(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made_files.html(tmp_path / "guide.html")

    code, out, _ = index(capsys, str(tmp_path / "guide.html"))

    assert code == 0 and out.startswith("1 file indexed (1 page, 1 passage)")
    [hit] = search(capsys, "reception desk visitors")
    assert hit["file"] == "guide.html" and hit["page"] is None  # the name people know, not the kept text's
    assert made_files.HTML_FACT in hit["text"] and hit["context"] == "Visitor Guide: Arriving"
    assert search(capsys, "secret script") == [] and search(capsys, "color red") == [] and search(capsys, "Home") == []
    kept = Path(".folio/documents/docs/guide.html.txt").read_text(encoding="utf-8")  # served as text, never as HTML
    assert kept == (
        "Visitor Guide\n\nArriving\n\nVisitors sign in at the reception desk on floor two. Badges are returned on "
        "leaving.\n\nDay | Opens\n\nMonday | 08:00"
    )
    assert listed(capsys)["guide.html"]["read"] == "web page"


def test_a_mail_is_indexed_with_its_date_and_its_attachment_as_a_file_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made_files.eml(tmp_path / "offer.eml")

    code, out, _ = index(capsys, str(tmp_path / "offer.eml"))

    assert code == 0 and out.startswith("2 files indexed")
    [mail] = search(capsys, "Zephyr kickoff Thursday")
    assert mail["file"] == "offer.eml" and mail["doc_date"] == "2026-03-03"
    assert mail["text"].startswith("Subject: Zephyr kickoff\nFrom: Ada Brennan <ada@example.com>\n")
    assert mail["context"].startswith("Zephyr kickoff")
    [attached] = search(capsys, "invoice 7781 payable")
    assert attached["file"] == "offer - terms.txt" and made_files.ATTACHED_FACT in attached["text"]
    assert attached["doc_date"] == "2026-03-03"  # the mail's date: the attachment came with it
    assert Path(".folio/documents/docs/offer - terms.txt").read_text(encoding="utf-8").startswith("Invoice 7781")
    files = listed(capsys)
    assert files["offer.eml"]["read"] == "mail" and files["offer - terms.txt"]["source"].endswith("offer.eml")

    (tmp_path / "offer.eml").unlink()  # the mail gone: its attachment goes with it
    code, out, _ = index(capsys, str(tmp_path), "--prune")
    assert "Removed 2 files no longer in the folder: offer - terms.txt, offer.eml." in out


def test_a_csv_file_is_a_table_whose_passages_repeat_the_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made_files.csv(tmp_path / "stock.csv")

    assert index(capsys, str(tmp_path / "stock.csv"))[0] == 0

    [hit] = search(capsys, "toner stock")
    assert (hit["file"], hit["page"], hit["tabular"]) == ("stock.csv", None, True)
    assert hit["text"] == "Item | Stock\nStaplers | 14\nToner | 3"
    assert hit["context"] == "stock | sheet stock, rows 2-3"  # the rows a citation names


def test_table_passages_hold_whole_rows_under_the_header() -> None:
    sheet = Sheet(name="Orders", header=("Region", "Units"), rows=tuple((f"Region {n}", str(n)) for n in range(30)))

    passages = table_passages(sheet, size=120)

    assert len(passages) > 1
    assert all(passage.startswith("Region | Units\n") for passage in passages)
    rows = [line for passage in passages for line in passage.splitlines()[1:]]
    assert rows == [f"Region {n} | {n}" for n in range(30)]  # every row once, none cut


def test_office_files_without_libreoffice_are_skipped_naming_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FOLIO_SOFFICE", MISSING.format("soffice"))
    made_files.docx(tmp_path / "report.docx")
    made_files.pptx(tmp_path / "deck.pptx")
    made_files.xlsx(tmp_path / "orders.xlsx")
    made_files.html(tmp_path / "guide.html")

    code, out, err = index(capsys, str(tmp_path))

    assert code == 0 and "not indexed" not in err
    assert out == (
        "1 file indexed (1 page, 1 passage), 0 unchanged, 0 failed; skipped 3: "
        "deck.pptx (needs LibreOffice: apt-get install libreoffice-impress-nogui), "
        "orders.xlsx (needs LibreOffice: apt-get install libreoffice-calc-nogui), "
        "report.docx (needs LibreOffice: apt-get install libreoffice-writer-nogui).\n"
    )


def test_an_office_file_whose_libreoffice_part_is_missing_is_skipped_naming_that_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "libreoffice" / "program"  # LibreOffice as Debian lays it out, with Writer but no Calc
    program.mkdir(parents=True)
    (program / "soffice").write_text("#!/bin/sh\nexit 1\n")
    (program / "soffice").chmod(0o755)
    (program / "libswlo.so").write_bytes(b"")
    monkeypatch.setenv("FOLIO_SOFFICE", str(program / "soffice"))
    (tmp_path / "docs").mkdir()
    made_files.xlsx(tmp_path / "docs" / "orders.xlsx")

    code, out, _ = index(capsys, str(tmp_path / "docs"))

    assert code == 0 and out.endswith(
        "skipped 1: orders.xlsx (needs LibreOffice: apt-get install libreoffice-calc-nogui).\n"
    )


def test_a_scan_without_ocr_is_reported_never_indexed_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FOLIO_OCRMYPDF", MISSING.format("ocrmypdf"))
    made_files.scan(tmp_path / "scan.pdf")

    code, out, err = index(capsys, str(tmp_path / "scan.pdf"))

    assert code == 1
    assert err.endswith(
        "folio: not indexed: scan.pdf: 1 page had no text: scanned? install tesseract-ocr or pass --ocr force\n"
    )
    monkeypatch.delenv("FOLIO_OCRMYPDF")  # installed or not: --ocr off never runs it
    code, out, err = index(capsys, str(tmp_path / "scan.pdf"), "--ocr", "off")
    assert code == 1
    assert err.endswith("scan.pdf: 1 page had no text: scanned? install tesseract-ocr or pass --ocr force\n")
    monkeypatch.setenv("FOLIO_OCRMYPDF", MISSING.format("ocrmypdf"))
    code, out, err = index(capsys, str(tmp_path / "scan.pdf"), "--ocr", "force")
    assert code == 0 and out.endswith(
        "skipped 1: scan.pdf (needs OCRmyPDF and Tesseract: apt-get install ocrmypdf tesseract-ocr "
        "tesseract-ocr-eng).\n"
    )


@pytest.mark.slow  # starts a process
def test_doctor_names_each_missing_converter_and_its_package(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("SOFFICE", "OCRMYPDF", "TESSERACT"):
        monkeypatch.setenv(f"FOLIO_{name}", MISSING.format(name.lower()))

    main(["doctor", "--json"])

    [check] = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["part"] == "converters"]
    assert check["status"] == "warn"
    assert check["summary"] == (
        "LibreOffice missing; OCRmyPDF missing; Tesseract missing; OCR auto, languages none (those files are skipped)"
    )
    assert check["fix"] == (
        "apt-get install libreoffice-calc-nogui libreoffice-impress-nogui libreoffice-writer-nogui "
        "ocrmypdf tesseract-ocr tesseract-ocr-eng"
    )


@pytest.mark.slow  # starts a process
def test_doctor_names_a_missing_libreoffice_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "program"  # Writer and Impress, no Calc
    program.mkdir()
    (program / "soffice").write_text("#!/bin/sh\necho 'LibreOffice 7.4.7.2 40(Build:2)'\n")
    (program / "soffice").chmod(0o755)
    for library in ("libswlo.so", "libsdlo.so"):
        (program / library).write_bytes(b"")
    monkeypatch.setenv("FOLIO_SOFFICE", str(program / "soffice"))
    monkeypatch.setenv("FOLIO_OCRMYPDF", MISSING.format("ocrmypdf"))

    main(["doctor", "--json"])

    [check] = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["part"] == "converters"]
    assert check["status"] == "warn"
    assert check["summary"].startswith("LibreOffice 7.4.7.2 40(Build:2); OCRmyPDF missing")
    assert check["fix"].startswith("apt-get install libreoffice-calc-nogui ocrmypdf tesseract-ocr")


def test_a_mail_with_only_an_html_body_and_an_attachment_folio_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from email.message import EmailMessage

    message = EmailMessage()
    message["Subject"], message["From"] = "Canteen menu", "kitchen@example.com"
    message["Date"] = "not a date"
    message.set_content("<p>Soup of the day: <b>lentil</b>.</p><script>track()</script>", subtype="html")
    message.add_attachment(b"PK\x03\x04", maintype="application", subtype="zip", filename="photos.zip")
    (tmp_path / "menu.eml").write_bytes(bytes(message))

    code, out, err = index(capsys, str(tmp_path / "menu.eml"))

    assert code == 0 and out.startswith("1 file indexed")
    assert "folio: note: menu.eml: attachment photos.zip not indexed: not a type Folio reads\n" in err
    [hit] = search(capsys, "soup of the day")
    # The HTML body's text, no script; an unreadable Date header is left out, and the file's date stands in.
    assert hit["text"] == "Subject: Canteen menu\nFrom: kitchen@example.com\n\nSoup of the day: lentil."
    assert hit["doc_date"] == date.fromtimestamp((tmp_path / "menu.eml").stat().st_mtime).isoformat()
