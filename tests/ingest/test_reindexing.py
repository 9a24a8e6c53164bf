"""Issue 18 findings 5 and 6: indexing again never silently swaps one document for another, nor strips tags, and
every command Folio prints repeats the options the run used. Run in-process as a user runs them."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from bot.cli import main
from bot.ingest import IndexOptions, index_files
from bot.models import Scope, Tag
from bot.retrieval.local import LocalRetriever


def listed(capsys: pytest.CaptureFixture[str], container: str) -> list[dict]:
    capsys.readouterr()
    assert main(["list", "--container", container, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def search(capsys: pytest.CaptureFixture[str], query: str, container: str) -> list[dict]:
    capsys.readouterr()
    assert main(["search", query, "--container", container, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_file_of_the_same_name_from_another_folder_is_refused_naming_both_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = tmp_path / "2025", tmp_path / "2026"
    for folder, days in ((old, "30"), (new, "14")):
        folder.mkdir()
        (folder / "policy.txt").write_text(f"Refunds are paid within {days} days.", encoding="utf-8")
    assert main(["index", str(old), "--container", "policies"]) == 0
    capsys.readouterr()

    assert main(["index", str(new), "--container", "policies"]) == 1
    told = capsys.readouterr().err
    assert (
        f"folio: not indexed: policy.txt: {new / 'policy.txt'} has the name of {old / 'policy.txt'}, already in "
        "policies; rename one, index it into another container, or take the first out with: "
        "folio remove policy.txt --container policies"
    ) in told
    [hit] = search(capsys, "refunds paid", "policies")
    assert "30 days" in hit["text"]
    assert [item["source"] for item in listed(capsys, "policies")] == [str(old / "policy.txt")]


def test_the_same_file_through_a_linked_folder_is_no_clash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Seen: a checkout's ../shared, a link to the real folder, indexed once through the link and once directly, was
    # refused as "has the name of" itself (the clash check compared the path strings, not the files).
    real = tmp_path / "docs"
    real.mkdir()
    (real / "policy.txt").write_text("Refunds are paid within 30 days.", encoding="utf-8")
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    assert main(["index", str(tmp_path / "linked"), "--container", "policies"]) == 0
    capsys.readouterr()

    assert main(["index", str(real), "--container", "policies"]) == 0
    assert "has the name of" not in capsys.readouterr().err
    [hit] = search(capsys, "refunds paid", "policies")
    assert "30 days" in hit["text"]


def test_a_file_whose_first_place_is_gone_replaces_it_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "drafts", tmp_path / "final"
    old.mkdir()
    (old / "policy.txt").write_text("Refunds are paid within 30 days.", encoding="utf-8")
    assert main(["index", str(old), "--container", "policies"]) == 0
    old.rename(new)  # the folder moved: nothing clashes, the file now lives here

    assert main(["index", str(new), "--container", "policies"]) == 0
    assert [item["source"] for item in listed(capsys, "policies")] == [str(new / "policy.txt")]


def test_indexing_again_keeps_each_files_tags_and_the_printed_command_repeats_the_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.md").write_text("Annual leave is 25 days.", encoding="utf-8")
    (docs / "parking.md").write_text("Parking permits renew in January.", encoding="utf-8")
    assert main(["index", str(docs), "--container", "hr", "--tag", "department=hr"]) == 0
    (docs / "parking.md").unlink()
    capsys.readouterr()

    assert main(["index", str(docs), "--container", "hr"]) == 0  # no --tag: the files keep theirs
    told = capsys.readouterr()
    assert "1 unchanged" in told.out
    hint = f"folio index {docs} --container hr --prune"
    assert told.err.rstrip().endswith(f"Remove it with: {hint}")

    capsys.readouterr()
    assert main(["index", str(docs), "--container", "hr", "--tag", "department=hr", "--date", "2026-01-05"]) == 0
    told = capsys.readouterr()
    command = re.search(r"Remove it with: (folio index .*)$", told.err.strip())
    expected = f"folio index {docs} --container hr --tag department=hr --date 2026-01-05 --prune"
    assert command and command.group(1) == expected
    assert main(shlex.split(command.group(1))[1:]) == 0
    assert "Removed 1 file no longer in the folder: parking.md." in capsys.readouterr().out
    [leave] = listed(capsys, "hr")
    assert (leave["file"], leave["tags"], leave["date"]) == ("leave.md", ["department:hr"], "2026-01-05")


def test_new_tags_replace_the_old_ones_and_clear_tags_removes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "leave.md").write_text("Annual leave is 25 days.", encoding="utf-8")
    assert main(["index", str(tmp_path / "leave.md"), "--container", "hr", "--tag", "department=hr"]) == 0
    assert main(["index", str(tmp_path / "leave.md"), "--container", "hr", "--tag", "year=2026"]) == 0
    assert [item["tags"] for item in listed(capsys, "hr")] == [["year:2026"]]
    assert main(["index", str(tmp_path / "leave.md"), "--container", "hr", "--clear-tags"]) == 0
    assert [item["tags"] for item in listed(capsys, "hr")] == [[]]


async def test_a_changed_file_indexed_again_without_tags_keeps_its_tags(tmp_path: Path) -> None:
    note = tmp_path / "leave.md"
    note.write_text("Annual leave is 25 days.", encoding="utf-8")
    index = LocalRetriever(tmp_path / "index.sqlite")
    try:
        await index_files([note], index, IndexOptions(container="hr", tags=(Tag(key="department", value="hr"),)))
        note.write_text("Annual leave is 27 days.", encoding="utf-8")
        assert (await index_files([note], index, IndexOptions(container="hr"))).files == 1
        scope = Scope(container="hr", tags=(Tag(key="department", value="hr"),))
        [hit] = await index.search("annual leave", scope, top=3)
        assert "27 days" in hit.text
    finally:
        await index.close()
