"""`folio index PATH... --container NAME [--tag KEY=VALUE ... | --clear-tags] [--date YYYY-MM-DD] [--prune]
[--follow-symlinks] [--jobs N] [--ocr auto|off|force]`"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import sys
from datetime import date
from pathlib import Path

from bot import messages
from bot.app import builders, open_folio
from bot.app.changes import documents_changed, index_changes
from bot.app.sync import failure_key, reading_stamp
from bot.cli.common import HelpFormatter, parse_tags, settings_from
from bot.cli.progress import IndexProgress
from bot.errors import InvalidInput, UnreadableFile
from bot.ingest import IndexOptions, IndexReport, collect_files, gone_files, index_files
from bot.ingest.kinds import stored_name
from bot.ingest.lifecycle import remove_files
from bot.ingest.parsing import stamp_of
from bot.ingest.pipeline import check_container_name, source_of
from bot.models import Scope, Tag, display_name
from bot.retrieval.filters import check_tag_keys
from bot.sources.state import SyncState

DESCRIPTION = """\
Index documents into a container, page by page: PDFs (scanned pages OCR'd), text and Markdown, Word, PowerPoint and
Excel files and their OpenDocument kin (through LibreOffice, kept as a PDF named orders.xlsx.pdf), CSV, web pages
and e-mail (.eml, attachments as files of their own). Spreadsheets and CSV files are indexed as tables, whole rows
under their header. Folders are searched recursively; hidden files are left out, and so are symbolic links unless
--follow-symlinks. A file already indexed from the same place with the same size, modification time, content, tags
and date is skipped without being read; a changed one replaces its old passages. Without --tag, a file indexed before
keeps its tags (--clear-tags removes them). A file named like one the container already holds from another path that
still exists is refused: rename one, or use another container. Files whose converter is not installed are skipped
with the package to install. A file that could not be read is remembered by its content and not read again until it
changes (--retry-failed reads it again): a run exits 1 when a file failed for the first time, not on every run after.
To keep folders in step with where the documents live, declare them in a sources file and run `folio sync`.
Files of the container that were indexed from a folder named here and are no longer in it are reported; --prune
removes them (passages, vectors and Folio's copy; links to them then say the document was removed)."""

MAX_JOBS = max(os.cpu_count() or 1, 1) * 2  # readers are CPU-bound: more processes than this only wait

EPILOG = """\
examples:
  folio index ./contracts --container legal --tag department=legal
  folio index ./contracts --container legal --prune          # also remove what left ./contracts
  folio index policy-2026.pdf --container finance --tag year=2026 --date 2026-01-12
  folio index ./archive --container legal --jobs 4            # read files in 4 processes
  folio index ../shared/corpus --container benefits"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "index",
        help="index documents into a container",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a file or a folder")
    parser.add_argument("--container", required=True, metavar="NAME", help="the container the documents go into")
    tags = parser.add_mutually_exclusive_group()
    tags.add_argument(
        "--tag",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="label every file, replacing its tags; repeatable (default: files indexed before keep theirs)",
    )
    tags.add_argument("--clear-tags", action="store_true", help="index the files with no tags, removing theirs")
    parser.add_argument("--date", metavar="YYYY-MM-DD", help="document date (default: PDF metadata, else file time)")
    parser.add_argument(
        "--prune", action="store_true", help="remove files of the container that left the folders named"
    )
    parser.add_argument("--follow-symlinks", action="store_true", help="index symbolic links inside folders too")
    parser.add_argument(
        "--jobs", type=_jobs, default=1, metavar="N", help=f"read files in N processes at once (up to {MAX_JOBS})"
    )
    parser.add_argument(
        "--retry-failed", action="store_true", help="read files that failed before and have not changed since, too"
    )
    parser.add_argument(
        "--ocr",
        choices=("auto", "off", "force"),
        default=None,
        help="OCR pages without text: auto (when Tesseract is installed; FOLIO_OCR), off, force (OCR every page)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Index the named files and print a summary; exit status 1 when any file failed."""
    settings = settings_from(args)
    container = check_container_name(args.container.strip())
    scope = Scope(containers=(container,), tags=parse_tags(args.tag))
    check_tag_keys(scope)
    day = _iso_date(args.date)
    collected = collect_files(args.paths, follow_symlinks=args.follow_symlinks)
    converters = builders.converters(settings, ocr=args.ocr)
    reading = reading_stamp(converters, settings.folio_max_file_chars)

    async def go() -> IndexReport:
        async with open_folio(settings) as folio:  # makes (and announces) the data folder the memory lives in
            memory = SyncState(settings.folio_data_dir / "sources" / "state.db")
            try:
                files, known_bad = unchanged_failures(
                    memory, container, collected.files, reading, retry=args.retry_failed
                )
                before = await folio.retriever.files(container)
                with IndexProgress(len(files)) as progress:
                    report = await index_files(
                        files,
                        folio.retriever,
                        IndexOptions(
                            container=container,
                            tags=_given_tags(args, scope.tags),
                            date=day,
                            documents=folio.documents,
                            max_chars=settings.folio_max_file_chars,
                            jobs=args.jobs,
                            converters=converters,
                        ),
                        on_file=progress,
                    )
                remember_failures(memory, container, files, report.failed, reading)
            finally:
                memory.close()
            report.notes.extend(known_bad)
            report.skipped.extend(collected.skipped)
            report.gone = gone_files(
                await folio.retriever.files(container), args.paths, collected.files, collected.unreadable
            )
            if args.prune and report.gone:
                report.removed = await remove_files(folio.retriever, folio.documents, report.gone)
            await documents_changed(index_changes(before, await folio.retriever.files(container)), folio=folio)
            return report

    report = asyncio.run(go())
    _print(report, args, container)
    return 1 if report.failed else 0  # files known bad and unchanged are noted, not failed again


def _print(report: IndexReport, args: argparse.Namespace, container: str) -> None:
    for failure in report.failed:
        print(f"folio: not indexed: {failure}", file=sys.stderr)
    for note in report.notes:
        print(f"folio: note: {note}", file=sys.stderr)
    print(report.summary())
    names = [display_name(held.file) for held in report.gone]
    if report.removed:
        print(messages.pruned(names))
    elif names:
        folders = " ".join(str(path) for path in args.paths if path.is_dir())
        command = again(args, container, "--prune")
        print(messages.gone_from_folder(names, container=container, folders=folders, command=command), file=sys.stderr)


def again(args: argparse.Namespace, container: str, *extra: str) -> str:
    """The command line of this run, quoted for a shell, with `extra` options: what a hint tells a person to run
    keeps the run's tags, date and options (a hint without --tag would keep the tags, one with fewer would not)."""
    words = ["folio"]
    if getattr(args, "env_file", ".env") != ".env":
        words += ["--env-file", args.env_file]
    words += ["index", *map(str, args.paths), "--container", container]
    for tag in args.tag:
        words += ["--tag", tag]
    words += ["--clear-tags"] * args.clear_tags
    words += ["--date", args.date] if args.date else []
    words += ["--follow-symlinks"] * args.follow_symlinks
    words += ["--jobs", str(args.jobs)] if args.jobs != 1 else []
    return shlex.join([*words, *extra])


def unchanged_failures(
    memory: SyncState, container: str, files: list[Path], reading: str, *, retry: bool
) -> tuple[list[Path], list[str]]:
    """(the files to read, a note for each left out): a file that failed before, with the same bytes and read the
    same way, is not read (converted, OCR'd) again unless `retry`; only files with such a record are hashed here."""
    keep, notes = [], []
    for path in files:
        known = None if retry else memory.known_bad(container, source_of(path))
        if known is not None and failure_key(_content(path), reading) == known[0]:
            notes.append(messages.known_bad_skipped(path.name, known[1]))
        else:
            keep.append(path)
    return keep, notes


def remember_failures(memory: SyncState, container: str, files: list[Path], failed: list[str], reading: str) -> None:
    """Remember each file that failed this run by its content (and forget those that were read)."""
    why = {line.partition(":")[0]: line.partition(":")[2].strip() for line in failed}
    for path in files:
        reason = why.get(path.name) or why.get(stored_name(path.name))
        if reason is not None:
            with contextlib.suppress(OSError):
                content = failure_key(_content(path), reading)
                memory.remember_bad(container, source_of(path), content=content, reason=reason)
        elif memory.known_bad(container, source_of(path)) is not None:
            memory.forget_bad(container, source_of(path))


def _content(path: Path) -> str:
    try:
        return stamp_of(path).content_hash
    except UnreadableFile:
        return ""


def _given_tags(args: argparse.Namespace, tags: tuple[Tag, ...]) -> tuple[Tag, ...] | None:
    """The tags to give every file, or None: each file keeps the tags it was indexed with."""
    return tags if tags or args.clear_tags else None


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if not 1 <= jobs <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes from 1 to {MAX_JOBS}")
    return jobs


def _iso_date(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError as exc:
        raise InvalidInput(f"--date {text!r} is not a date of the form YYYY-MM-DD (for example 2025-03-31).") from exc
