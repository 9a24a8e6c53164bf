"""`folio sources [--json]`: what the last sync of each source did, and when the next one runs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bot import messages
from bot.cli.common import HelpFormatter, settings_from
from bot.cli.render import printable
from bot.sources.spec import load_sources
from bot.sources.state import SyncState
from bot.sources.status import SourceStatus

DESCRIPTION = """\
Each source of the sources file with its last sync (as `folio sync` recorded it in the data folder): when it ran,
how many files the source holds, how many were indexed, unchanged, unreadable (with why) and removed, and when the
next run is due (with `folio sync --every`). --json prints a list of objects with the same fields."""

EPILOG = """\
examples:
  folio sources                       # one paragraph per source
  folio sources --json                # name, last_run, files, indexed, unchanged, unreadable, removed, next_run"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sources",
        help="what the last sync of each source did, and when the next runs",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--sources", type=Path, metavar="FILE", help="the sources file (default: FOLIO_SOURCES)")
    parser.add_argument("--json", action="store_true", help="a JSON list, one object per source")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    sources = load_sources(args.sources or settings.folio_sources)
    state_file = settings.folio_data_dir / "sources" / "state.db"
    known: dict[str, SourceStatus] = {}
    if state_file.exists():
        state = SyncState(state_file)
        try:
            known = state.statuses()
        finally:
            state.close()
    rows = [known.get(spec.name) or SourceStatus(name=spec.name, container=spec.container) for spec in sources.sources]
    if args.json:
        print(json.dumps([row.model_dump() for row in rows], indent=2))
    elif not rows:
        print(messages.SOURCES_NONE)
    for row in rows if not args.json else ():
        print(printable(describe(row)))
    return 0


def describe(status: SourceStatus) -> str:
    """A few lines about one source, as `folio sources` prints them."""
    head = f"{status.name} -> {status.container}"
    if status.last_run is None:
        return f"{head}: {messages.SOURCE_NEVER_RUN}"
    if not status.listed:
        lines = [f"{head}: last run {status.last_run}: NOT LISTED: {status.error}"]
    else:
        counts = messages.source_counts(
            files=status.files,
            indexed=status.indexed,
            unchanged=status.unchanged,
            unreadable=status.unreadable,
            removed=status.removed,
            skipped=status.skipped,
        )
        lines = [f"{head}: last run {status.last_run}: {counts}"]
    lines += [f"  unreadable: {line}" for line in status.unreadable_files]
    lines += [f"  last success: {status.last_success}"] if status.last_success != status.last_run else []
    lines += [f"  next run: {status.next_run}"] if status.next_run else []
    return "\n".join(lines)
