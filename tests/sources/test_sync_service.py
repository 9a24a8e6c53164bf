"""Issue 33: `folio sync --every` as a service: two syncers never work one source at once (a Redis lease), SIGTERM
ends it after the file being indexed, and its metrics say each source's files by state."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from redis import Redis

from bot.cli import main
from tests.sources.conftest import indexed, write_sources

SOURCES = "sources:\n  - {name: handbook, from: docs, container: team}\n"


def test_a_source_another_syncer_holds_is_skipped(
    sync_env: Path, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write_sources(sync_env, SOURCES)
    (sync_env / "docs").mkdir()
    (sync_env / "docs" / "leave.md").write_text("Annual leave is twenty-five days.", encoding="utf-8")

    redis = Redis.from_url(redis_url)
    lease = "folio:sources:sync:handbook"  # bot.store.source_lease: another process's token, 60 s to run
    redis.set(lease, "another-syncer", px=60_000)
    try:
        assert main(["sync"]) == 0
        assert "handbook: another `folio sync` is syncing this source now" in capsys.readouterr().err
        assert indexed("team") == {}
        assert redis.get(lease) == b"another-syncer"  # not taken, not released by the one that was turned away
    finally:
        redis.delete(lease)
        redis.close()
    assert main(["sync"]) == 0  # free: the next run syncs it
    assert set(indexed("team")) == {"leave.md"}
    assert redis.get(lease) is None  # released at the end of the run


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_every_runs_as_a_service_with_metrics_and_stops_on_sigterm(sync_env: Path, redis_url: str) -> None:
    write_sources(sync_env, SOURCES)
    (sync_env / "docs").mkdir()
    (sync_env / "docs" / "leave.md").write_text("Annual leave is twenty-five days.", encoding="utf-8")
    port = _free_port()
    env = {**os.environ, "FOLIO_METRICS_PORT": str(port)}
    service = subprocess.Popen(
        [str(Path(sys.executable).parent / "folio"), "sync", "--every", "10s"],
        cwd=sync_env,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        first = service.stdout.readline() if service.stdout else ""
        assert "handbook -> team: 1 files, 1 indexed" in first
        deadline, shown = time.monotonic() + 10, ""
        while 'state="indexed"' not in shown and time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
                shown = answer.read().decode()
        assert 'folio_source_files{source="handbook",state="indexed"} 1.0' in shown
        assert 'folio_source_last_success_timestamp_seconds{source="handbook"}' in shown
        service.send_signal(signal.SIGTERM)
        assert service.wait(timeout=20) == 0
    finally:
        if service.poll() is None:
            service.kill()
            service.wait()


@pytest.mark.slow
def test_sigterm_finishes_the_files_being_read_and_leaves_the_rest(sync_env: Path) -> None:
    write_sources(sync_env, SOURCES)
    calls = sync_env / "calls.txt"
    slow = sync_env / "soffice"  # stands in for LibreOffice: a second a file, then it fails
    slow.write_text(f"#!/bin/sh\necho run >> {calls}\nsleep 1\nexit 1\n", encoding="utf-8")
    slow.chmod(0o755)
    (sync_env / "docs").mkdir()
    for number in range(12):
        (sync_env / "docs" / f"report-{number:02d}.docx").write_bytes(b"not a Word file %d" % number)
    env = {**os.environ, "FOLIO_SOFFICE": str(slow), "FOLIO_CONVERT_JOBS": "1"}
    service = subprocess.Popen(
        [str(Path(sys.executable).parent / "folio"), "sync"],
        cwd=sync_env,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not (calls.exists() and calls.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        service.send_signal(signal.SIGTERM)
        out, _ = service.communicate(timeout=30)
    finally:
        if service.poll() is None:
            service.kill()
            service.wait()
    assert service.returncode == 0
    assert "stopped before the end (removals wait for the next run)" in out
    assert calls.read_text().count("run") < 12  # the rest were left for the next run
