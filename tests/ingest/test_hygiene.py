"""Issue 9.6 and 14.7: what a folder holds besides documents is reported, never silently mangled or followed, and
the data folder holding every container's text is private."""

from __future__ import annotations

import json
import os
import re
import stat
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from fpdf import FPDF

from bot.app import open_folio
from bot.cli import main
from bot.config import load_settings
from bot.ingest.decoding import decode_text
from bot.models import Conversation, Scope
from bot.store import ThreadKey

DATA = Path(".folio")  # tests run in an empty folder: the default FOLIO_DATA_DIR


def search(capsys: pytest.CaptureFixture[str], query: str, container: str = "docs") -> list[dict]:
    capsys.readouterr()
    assert main(["search", query, "--container", container, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_symlinks_inside_a_folder_are_skipped_and_reported_unless_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "salaries.md").write_text("Salary bands for every engineer.", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.md").write_text("Holiday allowance is 25 days.", encoding="utf-8")
    (docs / "linked.md").symlink_to(outside / "salaries.md")
    (docs / "shared").symlink_to(outside, target_is_directory=True)
    assert main(["index", str(docs), "--container", "docs"]) == 0
    out = capsys.readouterr().out
    assert "1 file indexed" in out
    assert "skipped 2: shared/ (symbolic link; --follow-symlinks to index it), linked.md (symbolic link;" in out
    assert search(capsys, "salary bands") == []

    assert main(["index", str(docs), "--container", "docs", "--follow-symlinks"]) == 0
    told = capsys.readouterr().out
    assert "2 files indexed" in told and "skipped" not in told
    assert sorted(hit["file"] for hit in search(capsys, "salary bands")) == ["linked.md", "salaries.md"]


def test_other_types_are_listed_in_the_summary_and_hidden_files_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.pages").write_bytes(b"PK\x03\x04 not indexed")
    (tmp_path / "docs" / "sheet.numbers").write_bytes(b"PK\x03\x04 not indexed")
    (tmp_path / "docs" / ".DS_Store").write_bytes(b"\x00\x01")
    (tmp_path / "docs" / ".git").mkdir()
    (tmp_path / "docs" / ".git" / "HEAD").write_text("ref: refs/heads/main")
    (tmp_path / "docs" / "faq.md").write_text("The canteen opens at eight.", encoding="utf-8")
    assert main(["index", str(tmp_path / "docs"), "--container", "docs"]) == 0
    assert capsys.readouterr().out == (
        "1 file indexed (1 page, 1 passage), 0 unchanged, 0 failed; "
        "skipped 2: notes.pages (unsupported type), sheet.numbers (unsupported type).\n"
    )


def test_a_file_over_the_text_cap_is_refused_by_name_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FOLIO_MAX_FILE_CHARS", "2000")
    (tmp_path / "huge.txt").write_text("word " * 1000, encoding="utf-8")
    pdf = FPDF()
    pdf.set_font("Helvetica", size=8)
    for _ in range(4):
        pdf.add_page()
        pdf.multi_cell(0, 4, "dense pdf text " * 60)
    pdf.output(str(tmp_path / "huge.pdf"))
    (tmp_path / "small.md").write_text("Small enough to index.", encoding="utf-8")
    assert (
        main(
            [
                "index",
                str(tmp_path / "huge.txt"),
                str(tmp_path / "huge.pdf"),
                str(tmp_path / "small.md"),
                "--container",
                "docs",
            ]
        )
        == 1
    )
    told = capsys.readouterr()
    for name in ("huge.txt", "huge.pdf"):
        assert f"not indexed: {name}: its text is longer than 2,000 characters (FOLIO_MAX_FILE_CHARS)" in told.err
    assert "1 file indexed" in told.out and "2 failed" in told.out


def test_a_huge_text_file_is_refused_without_being_read_into_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FOLIO_MAX_FILE_CHARS", "2000")
    with open(tmp_path / "server.log.txt", "wb") as handle:  # a stray log in the shared folder; sparse on disk
        handle.truncate(200_000_000)
    (tmp_path / "small.md").write_text("Small enough to index.", encoding="utf-8")
    tracemalloc.start()
    try:
        assert main(["index", str(tmp_path), "--container", "docs"]) == 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "not indexed: server.log.txt: its text is longer than 2,000 characters" in capsys.readouterr().err
    assert peak < 50_000_000  # far below the file's size: its size alone refused it


@pytest.mark.parametrize(
    ("data", "encoding", "note"),
    [
        ("Café crème, naïve façade: 5 €".encode("cp1252"), "Windows-1252", "not UTF-8, read as Windows-1252"),
        ("Café crème, naïve façade: 5 €".encode("utf-16"), "UTF-16", "not UTF-8, read as UTF-16"),
        ("Café crème, naïve façade: 5 €".encode("utf-16-le"), "UTF-16", "not UTF-8, read as UTF-16"),
        ("\ufeffCafé crème, naïve façade: 5 €".encode("utf-8"), "UTF-8", None),
    ],
)
def test_text_in_other_encodings_is_decoded_by_the_rule_and_noted(
    data: bytes, encoding: str, note: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert decode_text(data) is not None and decode_text(data).encoding == encoding  # type: ignore[union-attr]
    (tmp_path / "menu.txt").write_bytes(data)
    assert main(["index", str(tmp_path / "menu.txt"), "--container", "docs"]) == 0
    told = capsys.readouterr()
    assert (f"folio: note: menu.txt: {note}" in told.err) if note else "note" not in told.err
    [hit] = search(capsys, "crème façade")
    assert hit["text"] == "Café crème, naïve façade: 5 €"


def test_a_binary_file_named_txt_is_reported_not_indexed_as_replacement_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "blob.txt").write_bytes(bytes(range(256)) * 4)
    assert main(["index", str(tmp_path / "blob.txt"), "--container", "docs"]) == 1
    assert "not indexed: blob.txt: not text in UTF-8, UTF-16 or Windows-1252" in capsys.readouterr().err


def test_a_damaged_pdf_the_reader_repairs_is_indexed_without_its_raw_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, "Holiday allowance is 25 days.")
    data = bytes(pdf.output())
    offset = re.search(rb"startxref\s+(\d+)", data)
    assert offset
    broken = data[: offset.start(1)] + str(int(offset.group(1)) + 7).encode() + data[offset.end(1) :]
    (tmp_path / "damaged.pdf").write_bytes(broken)
    assert main(["index", str(tmp_path / "damaged.pdf"), "--container", "docs"]) == 0
    told = capsys.readouterr()
    assert "1 file indexed (1 page, 1 passage)" in told.out
    assert not [line for line in told.err.splitlines() if "pypdf" in line or "WARNING" in line]
    assert [hit["page"] for hit in search(capsys, "holiday allowance")] == [1]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The usual umask 022, under which plain files come out world-readable: Folio's must not."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_the_data_folder_is_created_private_and_announced(
    shared_dir: Path, usual_umask: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", str(shared_dir / "corpus" / "PerksPlus.pdf"), "--container", "docs"]) == 0
    assert f"folio: created the data folder {DATA.resolve()}" in capsys.readouterr().err
    folders = [DATA, *(path for path in DATA.rglob("*") if path.is_dir())]
    files = [path for path in DATA.rglob("*") if path.is_file()]
    assert {mode(folder) for folder in folders} == {0o700}
    assert {mode(file) for file in files} == {0o600}
    assert {"index.sqlite", "PerksPlus.pdf"} <= {file.name for file in files}
    assert main(["search", "gym", "--container", "docs"]) == 0
    assert "created the data folder" not in capsys.readouterr().err  # said once, when it was new


@pytest.mark.slow  # starts a process
async def test_the_embedded_redis_keeps_its_files_private(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, usual_umask: None
) -> None:
    monkeypatch.setenv("FOLIO_DATA_DIR", str(tmp_path / "data"))
    async with open_folio(load_settings(None), serving=True) as folio:
        assert folio.store is not None
        await folio.store.ping()
        await folio.store.save(
            ThreadKey(team="T", channel="C", thread_ts="1.0"), Conversation(scope=Scope(container="x"))
        )
    files = [path for path in (tmp_path / "data").rglob("*") if path.is_file()]
    assert files and {mode(file) & 0o077 for file in files} == {0}
    assert mode(tmp_path / "data") == 0o700


def test_a_file_name_with_terminal_escapes_is_printed_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "notes\x1b]52;c;ZXZpbA==\x07\x1b[2J.md").write_text("Parking permits renew in January.", "utf-8")
    assert main(["index", str(folder), "--container", "docs"]) == 0
    for command in (["list"], ["search", "parking permits", "--container", "docs"]):
        capsys.readouterr()
        assert main(command) == 0
        shown = capsys.readouterr()
        assert "notes" in shown.out and not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown.out + shown.err)
