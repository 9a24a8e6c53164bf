"""Issue 33: `folio sync` over a local folder source: one run adds, replaces, renames and removes; tags from the
sources file and from folders reach search filters; a bad file neither stops the rest nor is converted again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.app.sync import SyncOptions, SyncTargets, sync_source
from bot.cli import main
from bot.models import DocumentChange, Scope, Tag
from bot.retrieval.local import LocalRetriever
from bot.sources.listing import Rclone
from bot.sources.spec import SourceSpec
from bot.sources.state import SyncState
from tests.sources.conftest import indexed, search, write_sources

SOURCES = """\
sources:
  - name: handbook
    from: docs
    container: team
    tags: {department: ops}
    tags_from_path: [region]
    exclude: ["Archive/**"]
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_one_sync_adds_changes_renames_and_removes(sync_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_sources(sync_env, SOURCES)
    docs = sync_env / "docs"
    _write(docs / "emea" / "travel.md", "Travel: book trains for trips under four hours.")
    _write(docs / "apac" / "canteen.md", "The canteen opens at eight.")
    _write(docs / "leave.md", "Annual leave is twenty-five days.")
    _write(docs / "Archive" / "old.md", "The archived policy says nothing of note.")
    assert main(["sync"]) == 0
    assert set(indexed("team")) == {"travel.md", "canteen.md", "leave.md"}

    _write(docs / "emea" / "travel.md", "Travel: book trains for trips under six hours.")  # changed
    os.rename(docs / "apac" / "canteen.md", docs / "apac" / "food.md")  # renamed
    (docs / "leave.md").unlink()  # deleted
    _write(docs / "parking.md", "Parking is free after six.")  # added
    capsys.readouterr()
    assert main(["sync"]) == 0
    assert set(indexed("team")) == {"travel.md", "food.md", "parking.md"}
    assert "six hours" in search("trains trips", Scope(container="team"))[0].text
    assert search("annual leave twenty-five", Scope(container="team")) == []
    assert "handbook -> team: 3 files, 3 indexed, 0 unchanged, 0 unreadable, 1 removed" in capsys.readouterr().out


def test_tags_from_the_file_and_from_folders_reach_search_filters(sync_env: Path) -> None:
    write_sources(sync_env, SOURCES)
    _write(sync_env / "docs" / "emea" / "travel.md", "Travel: book trains for trips under four hours.")
    _write(sync_env / "docs" / "apac" / "travel-apac.md", "Travel: book trains for trips under two hours.")
    assert main(["sync"]) == 0
    assert indexed("team")["travel.md"] == ("department:ops", "region:emea")
    only_emea = Scope(container="team", tags=(Tag(key="region", value="emea"),))
    assert [chunk.file for chunk in search("trains trips", only_emea)] == ["travel.md"]
    ops = Scope(container="team", tags=(Tag(key="department", value="ops"),))
    assert {chunk.file for chunk in search("trains trips", ops)} == {"travel.md", "travel-apac.md"}


def test_a_file_added_later_gets_the_tags_and_a_removed_and_restored_one_gets_them_back(sync_env: Path) -> None:
    write_sources(sync_env, SOURCES)
    _write(sync_env / "docs" / "emea" / "travel.md", "Travel: book trains.")
    _write(sync_env / "docs" / "leave.md", "Annual leave is twenty-five days.")
    assert main(["sync"]) == 0
    moved = sync_env / "travel.md"
    os.rename(sync_env / "docs" / "emea" / "travel.md", moved)
    assert main(["sync"]) == 0
    assert set(indexed("team")) == {"leave.md"}
    _write(sync_env / "docs" / "emea" / "late.md", "A file added later.")
    os.rename(moved, sync_env / "docs" / "emea" / "travel.md")
    assert main(["sync"]) == 0
    assert {name: indexed("team")[name] for name in ("late.md", "travel.md")} == {
        name: ("department:ops", "region:emea") for name in ("late.md", "travel.md")
    }


def counting_converter(folder: Path) -> tuple[Path, Path]:
    """A program standing in for LibreOffice that counts its runs and fails, as a password-protected file does."""
    calls = folder / "calls.txt"
    program = folder / "soffice"
    program.write_text(f"#!/bin/sh\necho run >> {calls}\nexit 1\n", encoding="utf-8")
    program.chmod(0o755)
    return program, calls


@pytest.mark.slow  # runs a converter or a program
def test_a_bad_file_is_counted_not_fatal_and_not_converted_again(
    sync_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    program, calls = counting_converter(sync_env)
    monkeypatch.setenv("FOLIO_SOFFICE", str(program))
    write_sources(sync_env, SOURCES)
    _write(sync_env / "docs" / "locked.docx", "not really a Word file")
    _write(sync_env / "docs" / "leave.md", "Annual leave is twenty-five days.")
    assert main(["sync"]) == 0  # every source listed: 0, the unreadable file counted and named
    told = capsys.readouterr()
    assert "folio: unreadable: handbook: locked.docx:" in told.err
    assert "1 indexed, 0 unchanged, 1 unreadable" in told.out
    assert set(indexed("team")) == {"leave.md"}
    runs = calls.read_text().count("run")
    assert runs >= 1

    assert main(["sync"]) == 0
    assert "0 indexed, 1 unchanged, 1 unreadable" in capsys.readouterr().out
    assert calls.read_text().count("run") == runs  # not converted again
    os.utime(sync_env / "docs" / "locked.docx")  # touched, same bytes: still not converted
    assert main(["sync"]) == 0
    assert calls.read_text().count("run") == runs
    assert main(["sync", "--strict"]) == 1
    assert main(["sync", "--retry-failed"]) == 0
    assert calls.read_text().count("run") > runs


def test_an_unreachable_source_does_not_stop_the_next_and_exits_1(
    sync_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_sources(sync_env, "sources:\n  - {name: gone, from: missing-folder, container: team}\n" + SOURCES[9:])
    _write(sync_env / "docs" / "leave.md", "Annual leave is twenty-five days.")
    assert main(["sync"]) == 1
    told = capsys.readouterr()
    assert "gone: NOT LISTED: source gone:" in told.err
    assert set(indexed("team")) == {"leave.md"}


def test_a_source_that_lists_empty_removes_nothing(sync_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_sources(sync_env, SOURCES)
    _write(sync_env / "docs" / "leave.md", "Annual leave is twenty-five days.")
    assert main(["sync"]) == 0
    (sync_env / "docs" / "leave.md").unlink()  # the whole folder emptied: a wrong mount far likelier than intent
    assert main(["sync"]) == 1
    assert "listed no files, though 1 were indexed from it; nothing was removed" in capsys.readouterr().err
    assert set(indexed("team")) == {"leave.md"}


def test_folio_sources_shows_each_source_as_json(sync_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_sources(sync_env, SOURCES + "  - {name: later, from: elsewhere, container: team}\n")
    _write(sync_env / "docs" / "leave.md", "Annual leave is twenty-five days.")
    main(["sync", "handbook"])
    capsys.readouterr()
    assert main(["sources", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert (rows["handbook"]["files"], rows["handbook"]["indexed"], rows["handbook"]["removed"]) == (1, 1, 0)
    assert rows["handbook"]["last_run"] and rows["later"]["last_run"] is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("sources:\n  - name: a\n    from: x\n    container: team\n    colour: red\n", "line 5: sources.0.colour"),
        ("sources:\n  - name: a\n    from: ':s3,secret_access_key=K:bucket'\n    container: t\n", "line 3"),
        ("sources:\n  - name: a\n    from: x\n    container: t\n    rclone_options: [--config, /x]\n", "line 5"),
        ("sources:\n  - {name: a, from: x, container: t}\n  - {name: a, from: y, container: t}\n", "appears twice"),
    ],
)
def test_a_bad_sources_file_names_the_file_and_line(
    sync_env: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    write_sources(sync_env, text)
    assert main(["sync"]) == 2
    err = capsys.readouterr().err
    assert "sources.yaml" in err and said in err
    assert "secret_access_key=K" not in err


async def test_a_sync_hands_on_typed_document_changes_and_a_rename_keeps_its_identity(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _write(docs / "a.md", "Alpha policy: trains for short trips.")
    _write(docs / "b.md", "Beta policy: the canteen opens at eight.")
    index, state = LocalRetriever(tmp_path / "index.sqlite"), SyncState(tmp_path / "state.db")
    spec = SourceSpec(name="s", from_="docs", container="team")
    options = SyncOptions(base=tmp_path, staging=tmp_path / "staging", rclone=Rclone(program="rclone"))
    targets = SyncTargets(index=index, documents=None, state=state)

    async def sync() -> list[DocumentChange]:
        _, changes = await sync_source(spec, targets=targets, options=options, stop=lambda: False, previous=None)
        return changes

    try:
        first = {change.document: change for change in await sync()}
        assert {change.kind for change in first.values()} == {"added"}
        os.rename(docs / "a.md", docs / "c.md")
        (docs / "b.md").unlink()
        _write(docs / "d.md", "Delta policy: parking is free after six.")
        changes = {change.document: change for change in await sync()}
        assert {(c.kind, c.document, c.previous_name) for c in changes.values()} == {
            ("changed", "c.md", "a.md"),
            ("removed", "b.md", None),
            ("added", "d.md", None),
        }
        assert changes["c.md"].identity == first["a.md"].identity
        assert changes["c.md"].old_version == changes["c.md"].new_version == first["a.md"].new_version
        assert changes["b.md"].old_version == first["b.md"].new_version and changes["b.md"].new_version is None
        assert await sync() == []  # nothing changed: nothing to hand on
    finally:
        state.close()
        await index.close()


def test_a_second_file_of_one_name_is_refused_not_swapped_in(
    sync_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_sources(sync_env, SOURCES)
    _write(sync_env / "docs" / "emea" / "travel.md", "EMEA travel: book trains.")
    assert main(["sync"]) == 0
    _write(sync_env / "docs" / "apac" / "travel.md", "APAC travel: book flights.")
    assert main(["sync"]) == 0
    assert "apac/travel.md: travel.md is already the name of emea/travel.md" in capsys.readouterr().err
    assert "EMEA" in search("travel", Scope(container="team"))[0].text
    (sync_env / "docs" / "emea" / "travel.md").unlink()
    assert main(["sync", "--retry-failed"]) == 0
    assert "APAC" in search("travel", Scope(container="team"))[0].text


def test_tags_edited_in_the_sources_file_reach_every_document_of_the_source(sync_env: Path) -> None:
    write_sources(sync_env, SOURCES)
    _write(sync_env / "docs" / "leave.md", "Annual leave is twenty-five days.")
    assert main(["sync"]) == 0
    write_sources(sync_env, SOURCES.replace("{department: ops}", "{department: people, year: 2026}"))
    assert main(["sync"]) == 0
    assert indexed("team") == {"leave.md": ("department:people", "year:2026")}


def test_a_source_moved_to_another_container_leaves_the_old_one(sync_env: Path) -> None:
    write_sources(sync_env, SOURCES)
    _write(sync_env / "docs" / "leave.md", "Annual leave is twenty-five days.")
    assert main(["sync"]) == 0
    write_sources(sync_env, SOURCES.replace("container: team", "container: people"))
    assert main(["sync"]) == 0
    assert (indexed("team"), set(indexed("people"))) == ({}, {"leave.md"})


def test_a_source_taken_out_of_the_file_is_named_and_forget_removes_its_documents(
    sync_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_sources(sync_env, SOURCES + "  - {name: other, from: more, container: team}\n")
    _write(sync_env / "docs" / "leave.md", "Annual leave is twenty-five days.")
    _write(sync_env / "more" / "canteen.md", "The canteen opens at eight.")
    assert main(["sync"]) == 0
    write_sources(sync_env, SOURCES)
    capsys.readouterr()
    assert main(["sync"]) == 0
    assert "source other is no longer in the sources file" in capsys.readouterr().err
    assert main(["sync", "--forget", "handbook"]) == 2  # still declared: refused
    assert main(["sync", "--forget", "other"]) == 0
    assert set(indexed("team")) == {"leave.md"}
    capsys.readouterr()
    main(["sync"])
    assert "no longer in the sources file" not in capsys.readouterr().err


@pytest.mark.slow  # converts with a program (under unshare)
def test_a_bad_file_is_read_again_when_folio_reads_differently(sync_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program, calls = counting_converter(sync_env)
    monkeypatch.setenv("FOLIO_SOFFICE", str(program))
    write_sources(sync_env, SOURCES)
    _write(sync_env / "docs" / "locked.docx", "not really a Word file")
    _write(sync_env / "docs" / "leave.md", "Annual leave is twenty-five days.")
    assert main(["sync"]) == 0
    runs = calls.read_text().count("run")
    other = sync_env / "bin" / "soffice"  # another LibreOffice (a newer one installed): worth another try
    other.parent.mkdir()
    other.write_bytes(program.read_bytes())
    other.chmod(0o755)
    monkeypatch.setenv("FOLIO_SOFFICE", str(other))
    assert main(["sync"]) == 0
    assert calls.read_text().count("run") > runs
