"""Issue 33: `folio doctor` checks that each source of the sources file can be listed, and says how its last sync
ended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.sources.conftest import write_sources


def _doctor(capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:
    main(["doctor", "--json"])
    return {check["part"]: check for check in json.loads(capsys.readouterr().out)["checks"]}


@pytest.mark.slow  # runs a converter or a program
def test_doctor_lists_each_source_and_fails_the_one_it_cannot_list(
    sync_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (sync_env / "docs").mkdir()
    (sync_env / "docs" / "leave.md").write_text("Annual leave is twenty-five days.", encoding="utf-8")
    write_sources(
        sync_env,
        "sources:\n  - {name: here, from: docs, container: team}\n  - {name: gone, from: missing, container: team}\n",
    )
    checks = _doctor(capsys)
    assert checks["sources"]["status"] == "ok"
    assert (checks["source here"]["status"], checks["source gone"]["status"]) == ("warn", "fail")
    assert "never synced" in checks["source here"]["summary"]
    assert "missing cannot be listed" in checks["source gone"]["summary"]

    main(["sync", "here"])
    capsys.readouterr()
    checks = _doctor(capsys)
    assert checks["source here"]["status"] == "ok"
    assert "1 files" in checks["source here"]["summary"]


@pytest.mark.slow  # runs a converter or a program
def test_doctor_names_the_line_of_a_broken_sources_file(sync_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_sources(sync_env, "sources:\n  - {name: Bad Name, from: docs, container: team}\n")
    check = _doctor(capsys)["sources"]
    assert check["status"] == "fail" and "sources.yaml line 2" in check["summary"]


@pytest.mark.slow
def test_doctor_fails_a_remote_rclone_does_not_know(sync_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_sources(sync_env, "sources:\n  - {name: drive, from: 'nosuchremote:Team', container: team}\n")
    check = _doctor(capsys)["source drive"]
    assert check["status"] == "fail" and "rclone could not list nosuchremote:Team" in check["summary"]
