"""The documents' second pass: what a shared drive holds beside documents (lock and thumbnail files), pictures read
through OCR (turned upright first; garbage never indexed as text), one name per document everywhere, and plain words
for a password-protected or an empty Office file. Through `folio index`, `list`, `search` and `remove`, as an
operator runs them."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from bot.cli import main
from bot.evaluation.golden import page_key
from bot.ingest.legibility import legibility, legible
from tests.ingest import made_files

NEEDS_OCR = pytest.mark.skipif(
    not (shutil.which("ocrmypdf") and shutil.which("tesseract")),
    reason="OCRmyPDF and Tesseract are not installed (apt-get install ocrmypdf tesseract-ocr tesseract-ocr-eng)",
)
NEEDS_LIBREOFFICE = pytest.mark.skipif(
    shutil.which("soffice") is None, reason="LibreOffice is not installed (apt-get install libreoffice-writer-nogui)"
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def listed(capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:
    code, out, _ = run(capsys, "list", "--json")  # every container: one that lost its last file is no more
    assert code == 0
    return {held["file"]: held for held in json.loads(out) if held["container"] == "docs"}


def searched(capsys: pytest.CaptureFixture[str], query: str) -> list[dict]:
    code, out, _ = run(capsys, "search", query, "--container", "docs", "--json")
    assert code == 0
    return json.loads(out)


# --- noise beside documents -----------------------------------------------------------------------------------------
def test_lock_and_thumbnail_files_beside_documents_are_not_indexed_or_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drive = tmp_path / "drive"
    drive.mkdir()
    (drive / "Travel Policy 2026.txt").write_text("Trains are booked in second class for trips under four hours.")
    (drive / "~$avel Policy 2026.docx").write_bytes(b"\x0bAda Brennan" + b"\x00" * 150)  # Word's owner file
    (drive / ".~lock.Travel Policy 2026.docx#").write_text("Ada Brennan,ada,laptop,02.12.2026 09:12,file:///;")
    (drive / "Thumbs.db").write_bytes(b"\xd0\xcf\x11\xe0" + b"\x00" * 60)
    (drive / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (drive / "desktop.ini").write_text("[.ShellClassInfo]\nIconResource=C:\\icon.ico\n")

    code, out, err = run(capsys, "index", str(drive), "--container", "docs")

    assert code == 0, (out, err)
    assert out.startswith("1 file indexed")
    for noise in ("~$avel", ".~lock", "Thumbs.db", ".DS_Store", "desktop.ini"):
        assert noise not in out + err
    assert list(listed(capsys)) == ["Travel Policy 2026.txt"]


def test_a_lock_file_named_on_the_command_line_is_skipped_with_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "~$port.docx"
    lock.write_bytes(b"\x0bAda" + b"\x00" * 150)

    code, out, err = run(capsys, "index", str(lock), "--container", "docs")

    assert code == 0 and "~$port.docx (a lock or thumbnail file an editor leaves beside a document" in out + err


# --- one name per document ------------------------------------------------------------------------------------------
def test_a_converted_document_has_one_name_in_list_search_and_remove(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made_files.html(tmp_path / "guide.html")  # kept as its text, guide.html.txt, read without LibreOffice
    assert run(capsys, "index", str(tmp_path / "guide.html"), "--container", "docs")[0] == 0

    assert list(listed(capsys)) == ["guide.html"]
    assert [hit["file"] for hit in searched(capsys, "reception desk visitors")] == ["guide.html"]
    code, out, err = run(capsys, "search", "reception desk visitors", "--container", "docs")
    assert "1. guide.html" in out and ".txt" not in out

    code, out, err = run(capsys, "remove", "guide.html", "--container", "docs")  # the name `folio list` shows
    assert code == 0 and "guide.html" in out and ".txt" not in out + err, (out, err)
    assert listed(capsys) == {}


def test_the_stored_name_older_lists_showed_still_removes_the_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made_files.eml(tmp_path / "offer.eml")
    assert run(capsys, "index", str(tmp_path / "offer.eml"), "--container", "docs")[0] == 0

    code, out, err = run(capsys, "remove", "offer.eml.txt", "--container", "docs")

    assert code == 0, (out, err)
    assert "offer.eml" not in listed(capsys)


def test_a_golden_truth_may_name_a_converted_file_either_way() -> None:
    assert page_key("deck.pptx.pdf", 2) == page_key("deck.pptx", 2) != page_key("deck.pptx", 3)
    assert page_key("handbook.pdf", 4) == "handbook.pdf#page=4"


# --- OCR that reads garbage -----------------------------------------------------------------------------------------
def test_ocr_of_a_sideways_page_reads_as_garbage_and_printed_text_does_not(shared_dir: Path) -> None:
    sideways = "\"Jou SAep Ayiy} ae Suwa} JUaWAeYd\n£70z Avenue ct Aq yn 00'0SZ'‘T :anp je10L\nsal|ddns pooma|quies"
    assert not legible(sideways)
    assert legible("Invoice 4471 from Bramblewood Supplies. Total due: 1,250.00 EUR by 15 January 2027 (net).")
    assert legibility("a b") == 1.0  # too little text to judge: a stamp, a page number

    import pypdfium2

    document = pypdfium2.PdfDocument(shared_dir / "corpus" / "employee_handbook.pdf")
    pages = [document[number].get_textpage().get_text_range() for number in range(len(document))]
    assert all(legible(text) for text in pages)  # every page of a real document


# --- password-protected and empty Office files ----------------------------------------------------------------------
def test_a_password_protected_workbook_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import msoffcrypto.format.ooxml

    plain = made_files.xlsx(tmp_path / "plain.xlsx")
    protected = tmp_path / "Salaries 2026.xlsx"
    with plain.open("rb") as source, protected.open("wb") as out:
        msoffcrypto.format.ooxml.OOXMLFile(source).encrypt("s3cret", out)  # as Excel saves it with a password
    plain.unlink()

    code, out, err = run(capsys, "index", str(protected), "--container", "docs")

    assert code == 1
    assert "folio: not indexed: Salaries 2026.xlsx: protected by a password, so Folio cannot read it" in err
    assert "zip" not in err


@NEEDS_LIBREOFFICE
@pytest.mark.slow
def test_an_empty_word_document_is_called_empty_by_its_own_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import docx

    docx.Document().save(tmp_path / "empty.docx")

    code, out, err = run(capsys, "index", str(tmp_path / "empty.docx"), "--container", "docs")

    assert code == 1
    assert "folio: not indexed: empty.docx: the document is empty (no text and no pictures)" in err
    assert "empty.docx.pdf" not in out + err and "OCR" not in out + err


# --- pictures through OCR -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pictures_indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, int]:
    """A folder of pictures as people save them, indexed once: (data folder, stdout, stderr, exit status)."""
    if not (shutil.which("ocrmypdf") and shutil.which("tesseract")):
        pytest.skip("OCRmyPDF and Tesseract are not installed (apt-get install ocrmypdf tesseract-ocr)")
    root = tmp_path_factory.mktemp("pictures")
    drive = root / "drive"
    drive.mkdir()
    [receipt] = made_files.picture_pages([(made_files.PICTURE_FACT, *made_files.FILLER)])
    receipt.save(drive / "receipt.png", dpi=(200, 200))
    receipt.convert("RGB").save(drive / "receipt copy.jpg", dpi=(200, 200))
    receipt.save(drive / "screenshot.png")  # no resolution, as screenshots are saved
    first, second = made_files.picture_pages([made_files.FILLER, (made_files.TIFF_FACT, *made_files.FILLER)])
    first.save(drive / "lease.tif", save_all=True, append_images=[second], dpi=(200, 200))
    [sideways] = made_files.picture_pages([(made_files.SIDEWAYS_FACT, *made_files.FILLER)], turn=90)
    sideways.save(drive / "sideways.png", dpi=(200, 200))
    [mirrored] = made_files.picture_pages([(made_files.SIDEWAYS_FACT, *made_files.FILLER) * 2], mirror=True)
    mirrored.save(drive / "through the paper.png", dpi=(200, 200))
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        patch.setenv("FOLIO_DATA_DIR", str(root / ".folio"))
        patch.setenv("FOLIO_SAMPLE_CORPUS", "false")
        patch.setattr("sys.stdout", out)
        patch.setattr("sys.stderr", err)
        code = main(["index", str(drive), "--container", "docs", "--jobs", "2"])
    return root / ".folio", out.getvalue(), err.getvalue(), code


@pytest.fixture
def pictures(
    pictures_indexed: tuple[Path, str, str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str, int]:
    data = tmp_path / ".folio"
    shutil.copytree(pictures_indexed[0], data, ignore=shutil.ignore_patterns("*.sock", "redis*"))
    monkeypatch.setenv("FOLIO_DATA_DIR", str(data))
    monkeypatch.setenv("FOLIO_SAMPLE_CORPUS", "false")
    return pictures_indexed[1:]


@NEEDS_OCR
@pytest.mark.slow
def test_pictures_are_read_through_ocr_and_listed_by_their_own_names(
    pictures: tuple[str, str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, _ = pictures
    assert "not a type Folio reads" not in out + err and "unsupported" not in out + err
    files = listed(capsys)
    for name in ("receipt.png", "receipt copy.jpg", "screenshot.png", "lease.tif", "sideways.png"):
        assert files[name]["read"].startswith("OCR ("), (name, files)
    assert files["lease.tif"]["pages"] == 2
    found = {hit["file"] for hit in searched(capsys, "Bramblewood Supplies invoice due")}
    assert {"receipt.png", "receipt copy.jpg", "screenshot.png"} <= found


@NEEDS_OCR
@pytest.mark.slow
def test_a_fact_on_the_second_page_of_a_tiff_is_found_on_that_page(
    pictures: tuple[str, str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    [hit, *_] = searched(capsys, "notice period Harbour lease")
    assert (hit["file"], hit["page"]) == ("lease.tif", 2)
    assert "ninety days" in hit["text"]


@NEEDS_OCR
@pytest.mark.slow
def test_a_page_scanned_sideways_is_turned_upright_before_ocr(
    pictures: tuple[str, str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    [hit, *_] = searched(capsys, "storeroom alarm code Monday")
    assert hit["file"] == "sideways.png" and made_files.SIDEWAYS_FACT in " ".join(hit["text"].split())


@NEEDS_OCR
@pytest.mark.slow
def test_a_picture_ocr_cannot_read_is_reported_and_never_indexed_as_garbage(
    pictures: tuple[str, str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, code = pictures
    assert code == 1  # one file could not be read: `folio index` says so in its status
    assert "folio: not indexed: through the paper.png: OCR could not read it: its text came out as garbage" in err
    assert "through the paper.png" not in listed(capsys)
