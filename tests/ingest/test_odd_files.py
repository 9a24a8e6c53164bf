"""Odd files never stop a run, never replace another document, and never read past the text limit: mail attachments
go through the same name rules as files, any error a reader raises fails that one file by name, and every reader
stops as soon as FOLIO_MAX_FILE_CHARS is passed (one mail's parts counted together)."""

from __future__ import annotations

import shutil
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.ingest import made_files
from tests.ingest.test_formats import index, listed, search


def mail(path: Path, *attachments: tuple[str, str], body: str = "The budget is attached.") -> Path:
    message = EmailMessage()
    message["Subject"], message["From"] = "Budget", "ada@example.com"
    message["Date"] = "Tue, 03 Mar 2026 09:15:00 +0000"
    message.set_content(body)
    for name, text in attachments:
        message.add_attachment(text.encode(), maintype="text", subtype="plain", filename=name)
    path.write_bytes(bytes(message))
    return path


def kept(name: str) -> str:
    return Path(".folio/documents/docs", name).read_text(encoding="utf-8")


# --- mail parts go through the name rules of files ------------------------------------------------------------------
def test_an_attachment_never_replaces_a_real_document_of_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "report - budget.txt").write_text("The real budget is 100 thousand.", encoding="utf-8")
    mail(tmp_path / "report.eml", ("budget.txt", "The attached budget is 200 thousand."))

    code, out, err = index(capsys, str(tmp_path))

    assert code == 0 and out.startswith("3 files indexed"), (out, err)
    assert kept("report - budget.txt") == "The real budget is 100 thousand."
    assert kept("report - budget (2).txt") == "The attached budget is 200 thousand."
    [real] = search(capsys, "real budget 100")
    assert real["file"] == "report - budget.txt"
    files = listed(capsys)
    assert files["report - budget.txt"]["source"] == str(tmp_path / "report - budget.txt")
    assert files["report - budget (2).txt"]["source"] == str(tmp_path / "report.eml")
    # and again: nothing refused, nothing read again
    code, out, err = index(capsys, str(tmp_path))
    assert code == 0 and out.startswith("0 files indexed") and "2 unchanged, 0 failed" in out, (out, err)


def test_a_real_file_is_never_refused_because_an_attachment_took_its_name_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mails").mkdir()
    mail(tmp_path / "mails" / "report.eml", ("budget.txt", "The attached budget is 200 thousand."))
    assert index(capsys, str(tmp_path / "mails"))[0] == 0
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "report - budget.txt").write_text("The real budget is 100 thousand.", encoding="utf-8")

    code, out, err = index(capsys, str(tmp_path / "files"))

    assert code == 0 and out.startswith("1 file indexed"), (out, err)
    assert kept("report - budget.txt") == "The real budget is 100 thousand."
    assert "report - budget.txt: replaces the attachment budget.txt of report.eml" in err
    code, out, err = index(capsys, str(tmp_path / "files"))
    assert code == 0 and "1 unchanged, 0 failed" in out, (out, err)


def test_two_attachments_of_one_name_are_both_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mail(tmp_path / "report.eml", ("budget.txt", "First budget: 100."), ("budget.txt", "Second budget: 200."))

    code, out, err = index(capsys, str(tmp_path / "report.eml"))

    assert code == 0 and out.startswith("3 files indexed"), (out, err)
    assert kept("report - budget.txt") == "First budget: 100."
    assert kept("report - budget (2).txt") == "Second budget: 200."


# --- one odd file fails alone ---------------------------------------------------------------------------------------
def test_a_csv_cell_longer_than_the_csv_module_allows_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-notes.csv").write_text("Item,Note\nBoiler," + "x" * 140_000 + "\n", encoding="utf-8")
    (tmp_path / "b-after.txt").write_text("The canteen opens at eight.", encoding="utf-8")

    code, out, err = index(capsys, str(tmp_path))

    assert code == 0 and out.startswith("2 files indexed"), (out, err)


def test_attachment_names_too_long_or_holding_nul_are_made_safe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_name = "quarterly budget " * 20 + ".txt"  # 344 bytes
    raw = mail(tmp_path / "a-report.eml", (long_name, "Long name: 100."), ("bad.txt", "Odd name: 200.")).read_bytes()
    raw = raw.replace(b'filename="bad.txt"', b"filename*=utf-8''bad%00name.txt")
    (tmp_path / "a-report.eml").write_bytes(raw)
    (tmp_path / "b-after.txt").write_text("The canteen opens at eight.", encoding="utf-8")

    code, out, err = index(capsys, str(tmp_path))

    assert code == 0 and out.startswith("4 files indexed"), (out, err)
    names = sorted(listed(capsys))
    assert "a-report - badname.txt" in names and "b-after.txt" in names
    [long] = [name for name in names if name.startswith("a-report - quarterly")]
    assert len(long.encode()) <= 255 and long.endswith(".txt")


def test_a_damaged_sheet_fails_that_file_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice is not installed (apt-get install libreoffice-calc-nogui)")
    made_files.xlsx(tmp_path / "a-orders.xlsx")
    damage(tmp_path / "a-orders.xlsx", "xl/worksheets/sheet1.xml", lambda xml: xml[: len(xml) // 2])
    (tmp_path / "b-after.txt").write_text("The canteen opens at eight.", encoding="utf-8")

    code, out, err = index(capsys, str(tmp_path))

    assert code == 1 and out.startswith("1 file indexed") and "1 failed" in out, (out, err)
    assert "folio: not indexed: a-orders.xlsx: could not be read (" in err
    assert "open it and save it again" in err


def damage(path: Path, part: str, change: object) -> None:
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    parts[part] = change(parts[part].decode()).encode()  # type: ignore[operator]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)


# --- the text limit, read as it is passed ---------------------------------------------------------------------------
def test_a_spreadsheet_is_refused_as_soon_as_its_cells_pass_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first rows pass the limit; the sheet is damaged further on: reading that stops at the limit never sees it."""
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice is not installed (apt-get install libreoffice-calc-nogui)")
    from openpyxl import Workbook

    book = Workbook()
    for row in range(2000):
        book.active.append([f"row {row}", "a cell of text that fills the sheet"])
    book.save(tmp_path / "big.xlsx")
    damage(tmp_path / "big.xlsx", "xl/worksheets/sheet1.xml", lambda xml: xml.replace('<row r="1500"', "<row r=", 1))
    monkeypatch.setenv("FOLIO_MAX_FILE_CHARS", "1000")

    code, out, err = index(capsys, str(tmp_path / "big.xlsx"))

    assert code == 1, (out, err)
    assert "folio: not indexed: big.xlsx: its text is longer than 1,000 characters (FOLIO_MAX_FILE_CHARS)" in err


def test_one_mail_and_its_attachments_share_one_text_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = [(f"part{number}.txt", f"Part {number} says " + "words " * 150) for number in range(40)]  # 900 chars each
    mail(tmp_path / "a-bomb.eml", *parts)
    (tmp_path / "b-after.txt").write_text("The canteen opens at eight.", encoding="utf-8")
    monkeypatch.setenv("FOLIO_MAX_FILE_CHARS", "1000")

    code, out, err = index(capsys, str(tmp_path))

    assert code == 1 and out.startswith("1 file indexed"), (out, err)
    assert "folio: not indexed: a-bomb.eml: its text is longer than 1,000 characters (FOLIO_MAX_FILE_CHARS)" in err


# --- packages that unpack to far more than they weigh ---------------------------------------------------------------
def packed_tight(path: Path, part: str, megabytes: int) -> Path:
    """An Office package whose one part unpacks to `megabytes` of one letter: a few kilobytes on disk."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        package.writestr(part, b"A" * megabytes * 1024 * 1024)
    return path


def test_an_office_file_that_unpacks_past_the_limit_is_refused_unopened_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the guard, a 500 MB shared-string table packed into 488 KB cost openpyxl 1 GB of memory and 4 s."""
    packed_tight(tmp_path / "a-sheet.xlsx", "xl/sharedStrings.xml", 3)
    packed_tight(tmp_path / "b-letter.odt", "content.xml", 3)
    mail(tmp_path / "c-mail.eml", ("note.txt", "The fire drill is on Friday."))
    monkeypatch.setenv("FOLIO_MAX_UNPACKED_MB", "2")
    assert (tmp_path / "a-sheet.xlsx").stat().st_size < 20_000

    code, out, err = index(capsys, str(tmp_path))

    assert code == 1 and out.startswith("2 files indexed") and "2 failed" in out, (out, err)  # the mail and its part
    for name in ("a-sheet.xlsx", "b-letter.odt"):
        assert (
            f"folio: not indexed: {name}: it unpacks to 3 MB, more than FOLIO_MAX_UNPACKED_MB (2 MB) allows" in err
        ), err
    assert [hit["file"] for hit in search(capsys, "fire drill")] == ["c-mail - note.txt"]
