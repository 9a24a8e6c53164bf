"""Issue 9.2: documents can be listed and taken out: `folio list`, `folio remove`, `folio index --prune`.

Run in-process as a user runs them, on the local index in the test's folder (the default FOLIO_DATA_DIR, .folio).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.cli import main

COPIES = Path(".folio/documents")


def search(capsys: pytest.CaptureFixture[str], query: str, container: str = "docs") -> list[dict]:
    capsys.readouterr()
    assert main(["search", query, "--container", container, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def listed(capsys: pytest.CaptureFixture[str], container: str = "docs") -> list[dict]:
    capsys.readouterr()
    assert main(["list", "--container", container, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "incoming"
    docs.mkdir()
    (docs / "travel.md").write_text("Travel: economy class for flights under six hours.", encoding="utf-8")
    (docs / "parking.md").write_text("Parking permits are renewed every January.", encoding="utf-8")
    return docs


def test_index_reports_files_gone_from_the_folder_and_prune_removes_them(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", str(folder), "--container", "docs"]) == 0
    assert "2 files indexed" in capsys.readouterr().out
    (folder / "parking.md").unlink()

    assert main(["index", str(folder), "--container", "docs"]) == 0
    told = capsys.readouterr()
    assert "1 unchanged" in told.out
    assert f"1 file of docs came from {folder} and is no longer there: parking.md" in told.err
    assert f"folio index {folder} --container docs --prune" in told.err
    assert [hit["file"] for hit in search(capsys, "parking permits")] == ["parking.md"]  # reported, not removed

    assert main(["index", str(folder), "--container", "docs", "--prune"]) == 0
    assert "Removed 1 file no longer in the folder: parking.md." in capsys.readouterr().out
    assert search(capsys, "parking permits") == []
    assert [item["file"] for item in listed(capsys)] == ["travel.md"]
    assert not (COPIES / "docs" / "parking.md").exists()


def test_a_subfolder_that_cannot_be_listed_is_reported_and_its_files_are_not_pruned(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = folder / "facilities"
    sub.mkdir()
    (folder / "parking.md").rename(sub / "parking.md")
    assert main(["index", str(folder), "--container", "docs"]) == 0
    listing = os.scandir

    def refused(path: object = ".") -> object:  # what a service user without the permission, or a lost mount, gets
        if Path(os.fsdecode(path)) == sub:  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", str(path))
        return listing(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", refused)  # the tests run as root, whom permissions never stop
    capsys.readouterr()
    assert main(["index", str(folder), "--container", "docs", "--prune"]) == 0
    told = capsys.readouterr()
    assert "facilities/ (cannot be read: Permission denied" in told.out + told.err
    assert "Removed" not in told.out and "no longer" not in told.err
    assert [hit["file"] for hit in search(capsys, "parking permits")] == ["parking.md"]


def test_a_file_indexed_from_elsewhere_is_not_reported_as_gone(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "canteen.md").write_text("The canteen opens at eight.", encoding="utf-8")
    assert main(["index", str(other), "--container", "docs"]) == 0
    assert main(["index", str(folder), "--container", "docs", "--prune"]) == 0
    told = capsys.readouterr()
    assert "no longer" not in told.err + told.out
    assert [item["file"] for item in listed(capsys)] == ["canteen.md", "parking.md", "travel.md"]


def test_remove_takes_named_files_out_of_search_the_listing_and_the_copies(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", str(folder), "--container", "docs"]) == 0
    capsys.readouterr()
    assert main(["remove", "travel.md", "--container", "docs"]) == 0
    assert capsys.readouterr().out == "removed travel.md (1 passage)\n"
    assert search(capsys, "flights") == [] and [hit["file"] for hit in search(capsys, "parking")] == ["parking.md"]
    assert main(["remove", str(folder / "parking.md"), "nope.md", "--container", "docs"]) == 1  # a path names its file
    told = capsys.readouterr()
    assert told.out == "removed parking.md (1 passage)\n" and "not in docs: nope.md" in told.err
    assert not list((COPIES / "docs").iterdir())
    assert listed(capsys, "sample")  # the other container is untouched
    assert main(["search", "parking", "--container", "docs"]) == 2


def test_list_shows_file_pages_passages_tags_date_and_indexed_at(
    folder: Path, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pdf = shared_dir / "corpus" / "PerksPlus.pdf"
    assert (
        main(
            [
                "index",
                str(pdf),
                str(folder / "travel.md"),
                "--container",
                "docs",
                "--tag",
                "year=2023",
                "--date",
                "2023-05-01",
            ]
        )
        == 0
    )
    [perks, travel] = listed(capsys)
    expected = ("PerksPlus.pdf", 4, ["year:2023"], "2023-05-01")
    assert (perks["file"], perks["pages"], perks["tags"], perks["date"]) == expected
    assert perks["passages"] > 4 and perks["indexed_at"].endswith("+00:00") and perks["source"] == str(pdf)
    assert (travel["file"], travel["pages"], travel["passages"]) == ("travel.md", None, 1)

    capsys.readouterr()
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["container", "file", "pages", "passages", "tags", "date", "indexed", "at", "read"]
    row = next(line for line in lines if "PerksPlus.pdf" in line).split()
    assert row[:3] == ["docs", "PerksPlus.pdf", "4"] and row[4:6] == ["year:2023", "2023-05-01"] and row[-1] == "-"
    assert any(line.startswith("sample ") for line in lines)  # every container when none is named


def test_container_names_are_checked_when_indexing(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("my docs", "legal/contracts", ".hidden"):
        assert main(["index", str(folder), "--container", name]) == 2
        assert f"{name!r} cannot be a container name" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["search", "parking"], ["ask", "parking?"], ["list"], ["chat"]])
def test_a_misspelt_container_names_the_containers_that_hold_documents(
    command: list[str], folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", str(folder), "--container", "docs"]) == 0
    capsys.readouterr()
    assert main([*command, "--container", "doc"]) == 2
    err = capsys.readouterr().err
    assert "Container 'doc' holds no documents. Containers here: docs (2 passages), sample (" in err
