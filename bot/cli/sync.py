"""`folio sync [SOURCE...] [--every 15m] [--jobs N] [--retry-failed] [--strict]`: the sources file, kept in sync."""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path

from prometheus_client import start_http_server

from bot import messages
from bot.app import Folio, builders, open_folio, open_store
from bot.app.changes import documents_changed
from bot.app.sync import SyncOptions, SyncTargets, forget_source, reading_stamp, sync_source
from bot.cli.common import HelpFormatter, settings_from
from bot.cli.index import MAX_JOBS
from bot.cli.progress import IndexProgress
from bot.config import Settings
from bot.errors import ConfigurationError, FolioError
from bot.models import DocumentChange, utc_now
from bot.sources.listing import Rclone, default_program
from bot.sources.spec import SourcesFile, SourceSpec, load_sources
from bot.sources.state import SyncState
from bot.sources.status import SourceStatus
from bot.store import ConversationStore
from bot.store.source_lease import source_lease

log = logging.getLogger(__name__)

DESCRIPTION = """\
Sync every source of the sources file (sources.yaml, or FOLIO_SOURCES): list it with sizes, times and hashes (no
download), fetch and index only the files that are new or changed, and remove the documents of files that are gone,
in the same run. A renamed or moved file keeps its identity. A file that cannot be read is counted, named and not
converted again until it changes (--retry-failed tries every one again). One source or file that fails never stops
the others. Exit status 0 when every source was listed, 1 when one could not be (--strict: also when a file could
not be read). --every runs as a service: a sync now, then every interval, the sources file read again each time;
SIGTERM ends it after the file being indexed."""

EPILOG = """\
examples:
  folio sync                          # every source, once
  folio sync team-drive --jobs 4      # one source, converting 4 files at once
  folio sync --every 15m              # the service (compose `sync`, the Helm chart's syncer)
  folio sync --retry-failed           # read the files that failed before again
  folio sources                       # what the last runs did"""

_DURATION = re.compile(r"^(\d+)(s|m|h|d)?$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sync",
        help="sync the sources of the sources file into the index",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("names", nargs="*", metavar="SOURCE", help="sync only these sources (default: all)")
    parser.add_argument("--sources", type=Path, metavar="FILE", help="the sources file (default: FOLIO_SOURCES)")
    parser.add_argument("--every", type=duration, metavar="INTERVAL", help="sync again every INTERVAL (15m, 1h)")
    parser.add_argument("--jobs", type=_jobs, default=1, metavar="N", help=f"read N files at once (up to {MAX_JOBS})")
    parser.add_argument("--retry-failed", action="store_true", help="read files that failed before again")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any file could not be read, too")
    parser.add_argument(
        "--forget",
        metavar="SOURCE",
        action="append",
        default=[],
        help="remove the documents of a source taken out of the sources file, and forget it (repeatable)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Sync once (or every INTERVAL until SIGTERM); print one line per source."""
    settings = settings_from(args)
    path = args.sources or settings.folio_sources
    sources = load_sources(path)  # a broken file is an error at start, with file and line
    sources.named(args.names)
    return asyncio.run(_serve(settings, path, sources, args))


async def _serve(settings: Settings, path: Path, sources: SourcesFile, args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    if args.every is not None and settings.folio_metrics_port is not None:
        # folio_source_files{source,state} and last-success times, for Prometheus (a thread of prometheus-client)
        start_http_server(settings.folio_metrics_port)
    code = 0
    while True:
        code = await _sync_all(settings, path, sources, args, stop)
        if args.every is None or stop.is_set():
            return code
        try:
            await asyncio.wait_for(stop.wait(), timeout=args.every)
            return code
        except TimeoutError:
            pass
        try:
            sources = load_sources(path)  # read again: an edit takes effect on the next run
        except ConfigurationError as exc:
            log.error("%s. The sources read before stay in force until the file is fixed.", str(exc).rstrip("."))


async def _sync_all(
    settings: Settings, path: Path, sources: SourcesFile, args: argparse.Namespace, stop: asyncio.Event
) -> int:
    """One run over the named sources; the exit status it ends with."""
    converters = builders.converters(settings)
    options = SyncOptions(
        base=path.resolve().parent,
        staging=settings.folio_data_dir / "sources" / "fetched",
        rclone=Rclone(program=settings.folio_rclone or default_program(), timeout=settings.folio_rclone_timeout),
        converters=converters,
        jobs=args.jobs,
        retry_failed=args.retry_failed,
        max_chars=settings.folio_max_file_chars,
        reading=reading_stamp(converters, settings.folio_max_file_chars),
    )
    results: list[SourceStatus] = []
    changes: list[DocumentChange] = []
    async with AsyncExitStack() as stack:
        folio = await stack.enter_async_context(open_folio(settings))  # makes (and announces) the data folder
        store = await stack.enter_async_context(open_store(settings))
        state = SyncState(settings.folio_data_dir / "sources" / "state.db")
        stack.callback(state.close)
        if args.forget:
            return await _forget(args.forget, sources, _targets(folio, state), folio=folio, store=store.conversations)
        _tell_undeclared(sources, state)
        redis, prefix = store.conversations.keyspace("sources")
        previous = state.statuses()
        for spec in sources.named(args.names):
            if stop.is_set():
                break
            lost = asyncio.Event()
            async with source_lease(redis, prefix, spec.name, lost=lost) as mine:
                if not mine:
                    print(messages.source_busy(spec.name), file=sys.stderr)
                    continue
                halted = partial(_halted, stop, lost)
                status, made = await _sync_one(spec, folio, state, options, halted, previous.get(spec.name))
            results.append(_with_next_run(status, args.every, state))
            changes.extend(made)
            _print(spec, status)
        await documents_changed(changes, folio=folio, store=store.conversations)
    return exit_status(results, strict=args.strict)


async def _sync_one(
    spec: SourceSpec,
    folio: Folio,
    state: SyncState,
    options: SyncOptions,
    halted: Callable[[], bool],
    previous: SourceStatus | None,
) -> tuple[SourceStatus, list[DocumentChange]]:
    """One source, its failures its own: an index or store error fails it, and the next source may fare better."""
    try:
        with _with_progress(_targets(folio, state)) as targets:
            return await sync_source(spec, targets=targets, options=options, stop=halted, previous=previous)
    except FolioError as exc:
        return _failed(spec, str(exc), previous, state), []


def _failed(spec: SourceSpec, error: str, previous: SourceStatus | None, state: SyncState) -> SourceStatus:
    status = SourceStatus(
        name=spec.name,
        container=spec.container,
        last_run=utc_now(),
        finished=utc_now(),
        error=error,
        last_success=previous.last_success if previous else None,
    )
    state.save_status(status)
    return status


async def _forget(
    names: list[str], sources: SourcesFile, targets: SyncTargets, *, folio: Folio, store: ConversationStore
) -> int:
    """`--forget`: only sources the file no longer declares, so a typo cannot empty a live one."""
    declared = {spec.name for spec in sources.sources}
    for name in names:
        if name in declared:
            raise ConfigurationError(f"source {name} is in the sources file; take it out first, then --forget it")
    changes = []
    for name in names:
        removed = await forget_source(name, targets)
        print(messages.source_forgotten(name, len(removed)))
        changes += removed
    await documents_changed(changes, folio=folio, store=store)
    return 0


def _tell_undeclared(sources: SourcesFile, state: SyncState) -> None:
    declared = {spec.name for spec in sources.sources}
    for name, files in sorted(state.sources().items()):
        if name not in declared:
            print(f"folio: {messages.source_undeclared(name, files)}", file=sys.stderr)


def _halted(*events: asyncio.Event) -> bool:
    """Whether a stop was asked for (SIGTERM) or the lease lost: the run ends after the file being indexed."""
    return any(event.is_set() for event in events)


def exit_status(results: list[SourceStatus], *, strict: bool) -> int:
    """0 when every source was listed (unreadable files counted), 1 when one was not (or, strict, a file failed)."""
    if any(not status.ok for status in results):
        return 1
    return 1 if strict and any(status.unreadable for status in results) else 0


def _targets(folio: Folio, state: SyncState) -> SyncTargets:
    return SyncTargets(index=folio.retriever, documents=folio.documents, state=state)


@contextmanager
def _with_progress(targets: SyncTargets) -> Iterator[SyncTargets]:
    """The targets with a progress bar on a terminal (one line per file in a log), as `folio index` shows."""
    with IndexProgress(0) as progress:

        def total(count: int) -> None:
            progress.total = count  # known once the listing is compared

        yield replace(targets, on_file=progress, on_total=total)


def _with_next_run(status: SourceStatus, every: float | None, state: SyncState) -> SourceStatus:
    if every is None:
        return status
    due = (datetime.now(timezone.utc) + timedelta(seconds=every)).isoformat(timespec="seconds")
    status = status.model_copy(update={"next_run": due})
    state.save_status(status)
    return status


def _print(spec: SourceSpec, status: SourceStatus) -> None:
    if not status.listed:
        print(messages.source_failed(spec.name, status.error), file=sys.stderr)
        return
    for line in status.unreadable_files:
        print(f"folio: unreadable: {spec.name}: {line}", file=sys.stderr)
    counts = messages.source_counts(
        files=status.files,
        indexed=status.indexed,
        unchanged=status.unchanged,
        unreadable=status.unreadable,
        removed=status.removed,
        skipped=status.skipped,
    )
    result = f"{counts}; {messages.SOURCE_STOPPED}" if status.stopped else counts
    print(messages.source_line(name=spec.name, container=spec.container, result=result), flush=True)


def duration(text: str) -> float:
    """`15m`, `1h`, `90s`, `900` (seconds): at least 10 seconds."""
    match = _DURATION.match(text.strip().lower())
    seconds = int(match.group(1)) * _UNITS[match.group(2)] if match else 0
    if seconds < 10:
        raise argparse.ArgumentTypeError(f"{text!r} is not an interval of 10s or more (15m, 1h, 900)")
    return float(seconds)


def _jobs(text: str) -> int:
    jobs = int(text) if text.isdigit() else 0
    if not 1 <= jobs <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes from 1 to {MAX_JOBS}")
    return jobs
