"""Issue 20.5: unchanged files are skipped without being read, files parse in parallel processes (`--jobs`), and a
run shows its progress: a bar on a terminal, one line per file otherwise."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from bot.cli import main
from bot.ingest import IndexOptions, index_files
from bot.models import Scope
from bot.retrieval.local import LocalRetriever
from tests.cli.terminal import Terminal, clean_env
from tests.ingest.test_ingest import FILLER, make_pdf


async def test_an_unchanged_file_is_skipped_without_being_read(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "handbook.pdf", [f"Chapter {n}. {FILLER}" for n in range(1, 4)])
    index = LocalRetriever(tmp_path / "index.sqlite")
    try:
        assert (await index_files([pdf], index, IndexOptions(container="c"))).files == 1
        # Reading it now would refuse it (its text passes this cap): an unchanged file is not read at all.
        again = await index_files([pdf], index, IndexOptions(container="c", max_chars=100))
        assert (again.files, again.unchanged, again.failed) == (0, 1, [])
    finally:
        await index.close()


async def test_a_file_whose_time_changed_is_read_again_and_takes_its_new_date(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("The canteen opens at eight.", encoding="utf-8")
    os.utime(note, (datetime(2021, 5, 4).timestamp(),) * 2)
    index = LocalRetriever(tmp_path / "index.sqlite")
    try:
        await index_files([note], index, IndexOptions(container="c"))
        os.utime(note, (datetime(2024, 9, 1).timestamp(),) * 2)  # same size and content, a new modification time
        again = await index_files([note], index, IndexOptions(container="c"))
        assert (again.files, again.unchanged) == (1, 0)
        [hit] = await index.search("canteen", Scope(container="c"), top=1)
        assert hit.doc_date == "2024-09-01"
    finally:
        await index.close()


@pytest.mark.slow  # worker processes (multiprocessing's spawn, which raises no audit event: marked by hand)
def test_jobs_parse_files_in_parallel_processes_with_the_same_passages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("alpha", "beta", "gamma"):
        make_pdf(docs / f"{name}.pdf", [f"{FILLER} The {name} code is {name}{page}x." for page in range(1, 4)])
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\n this is not really a pdf")
    assert main(["index", str(docs), "--container", "one"]) == 1
    assert main(["index", str(docs), "--container", "two", "--jobs", "2"]) == 1
    told = capsys.readouterr()
    assert told.out.count("3 files indexed (9 pages, ") == 2
    assert told.err.count("folio: not indexed: broken.pdf: the PDF cannot be read") == 2
    for container in ("one", "two"):
        assert main(["search", "gamma code gamma2x", "--container", container, "--json"]) == 0
        assert '"file": "gamma.pdf"' in capsys.readouterr().out


def test_without_a_terminal_each_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "leave.md").write_text("Annual leave is 25 days.", encoding="utf-8")
    make_pdf(tmp_path / "travel.pdf", ["Economy class for flights.", "Taxis need a receipt."])
    assert main(["index", str(tmp_path), "--container", "hr"]) == 0
    assert main(["index", str(tmp_path), "--container", "hr"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("folio: [")]
    assert lines == [
        "folio: [1/2] leave.md: indexed, 1 passage",
        "folio: [2/2] travel.pdf: indexed, 2 pages, 2 passages",
        "folio: [1/2] leave.md: unchanged",
        "folio: [2/2] travel.pdf: unchanged",
    ]


@pytest.mark.slow  # starts a process
def test_on_a_terminal_a_bar_shows_files_pages_passages_and_the_current_file(tmp_path: Path) -> None:
    make_pdf(tmp_path / "travel.pdf", ["Economy class for flights.", "Taxis need a receipt."])
    terminal = Terminal.folio(
        "index", str(tmp_path / "travel.pdf"), "--container", "hr", env=clean_env(tmp_path / "data"), cwd=tmp_path
    )
    terminal.expect("1 file indexed")
    assert terminal.wait() == 0
    shown = terminal.raw.decode()
    assert "Indexing [" in shown and "1/1 files, 2 pages, 2 passages" in shown and "travel.pdf" in shown
    assert "folio: [1/1]" not in shown  # the bar, not the log lines


def test_a_number_of_jobs_out_of_range_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["index", str(tmp_path), "--container", "hr", "--jobs", "0"])
    assert exited.value.code == 2
    assert "--jobs: '0' is not a number of processes from 1 to " in capsys.readouterr().err
