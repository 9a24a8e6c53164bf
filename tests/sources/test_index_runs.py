"""Issue 33 for `folio index PATH`: a file that failed is not converted again until it changes, and an unchanged run
with such a file exits 0; tags stay on re-index; every run that changes documents hands its changes on."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.cli import main
from tests.sources.conftest import indexed
from tests.sources.test_sync_folder import counting_converter


@pytest.mark.slow  # runs a converter or a program
def test_a_known_bad_file_is_not_converted_again_and_an_unchanged_run_exits_0(
    sync_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    program, calls = counting_converter(sync_env)
    monkeypatch.setenv("FOLIO_SOFFICE", str(program))
    docs = sync_env / "alpha"
    docs.mkdir()
    (docs / "locked.docx").write_bytes(b"not a Word file")
    (docs / "leave.md").write_text("Annual leave is twenty-five days.", encoding="utf-8")
    assert main(["index", str(docs), "--container", "alpha"]) == 1  # a new failure is news: exit 1
    runs = calls.read_text().count("run")
    capsys.readouterr()
    assert main(["index", str(docs), "--container", "alpha"]) == 0
    told = capsys.readouterr()
    assert "locked.docx: not read again, unchanged since it failed" in told.err
    assert calls.read_text().count("run") == runs
    assert main(["index", str(docs), "--container", "alpha", "--retry-failed"]) == 1
    assert calls.read_text().count("run") > runs
    (docs / "locked.docx").write_bytes(b"changed, still not a Word file")
    runs = calls.read_text().count("run")
    assert main(["index", str(docs), "--container", "alpha"]) == 1  # changed: read again
    assert calls.read_text().count("run") > runs


def test_tags_stay_when_a_changed_file_is_indexed_again_without_tag(sync_env: Path) -> None:
    note = sync_env / "note.md"
    note.write_text("The canteen opens at eight.", encoding="utf-8")
    assert main(["index", str(note), "--container", "c", "--tag", "department=ops"]) == 0
    note.write_text("The canteen opens at nine.", encoding="utf-8")
    assert main(["index", str(note), "--container", "c"]) == 0
    assert indexed("c") == {"note.md": ("department:ops",)}


def test_index_and_remove_hand_their_document_changes_on(sync_env: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="bot.app.changes")
    note = sync_env / "note.md"
    note.write_text("The canteen opens at eight.", encoding="utf-8")
    main(["index", str(note), "--container", "c"])
    note.write_text("The canteen opens at nine.", encoding="utf-8")
    main(["index", str(note), "--container", "c"])
    main(["index", str(note), "--container", "c"])  # unchanged: no change to hand on
    main(["remove", "note.md", "--container", "c"])
    said = [record.getMessage() for record in caplog.records if record.name == "bot.app.changes"]
    assert [line for line in said if line.startswith("documents changed")] == [
        "documents changed: 1 added",
        "documents changed: 1 changed",
        "documents changed: 1 removed",
    ]
    assert len([line for line in said if line.startswith("watch: 1 documents")]) == 2  # the change and the removal
