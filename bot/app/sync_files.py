"""Indexing one fetched batch of a source through the ingest pipeline, and remembering what became of each file."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bot.app.sync_run import SyncRun
from bot.ingest.kinds import OFFICE, stored_name, suffix
from bot.ingest.pipeline import FileEvent, IndexOptions, IndexReport, OnFile, index_files
from bot.models import DocumentChange
from bot.sources.listing import Entry
from bot.sources.spec import SourceSpec
from bot.sources.state import Held

TEXT_CALL = 64  # files of other kinds (PDF, text, mail) a pipeline call takes


@dataclass(frozen=True, kw_only=True)
class Pending:
    """A listed file that is new or changed since the last run; `file` and `content` once it is fetched."""

    entry: Entry
    held: Held | None
    settings: str
    file: Path | None = None
    content: str = ""
    renamed_from: Held | None = None  # a file gone from the source that this one is (moved or renamed)


async def index_batch(sync: SyncRun, batch: list[Pending]) -> bool:
    """Index the fetched files of one batch and record each: one pipeline call per set of tags and distinct names,
    a few files at a time so that a stop (checked between calls) waits for little. True when a stop came."""
    spec, targets, options = sync.spec, sync.targets, sync.options
    for group in _groups(spec, batch):
        for files in _calls(group, jobs=options.jobs):
            if sync.stop():
                return True
            outcome: dict[str, str] = {}
            report = await index_files(
                [item.file for item in files if item.file is not None],
                targets.index,
                IndexOptions(
                    container=spec.container,
                    tags=spec.tags_for(files[0].entry.path),
                    documents=targets.documents,
                    jobs=options.jobs,
                    max_chars=options.max_chars,
                    converters=options.converters,
                ),
                on_file=_noting(outcome, targets.on_file),
            )
            for item in files:
                _record(sync, item, outcome.get(_name(item), "failed"), report)
    return False


def _calls(group: list[Pending], *, jobs: int) -> list[list[Pending]]:
    """Files a pipeline call takes: `jobs` x 2 of those LibreOffice converts (seconds each), TEXT_CALL of the rest
    (each call lists the container once, so calls of one file would make a first sync of 20,000 files slow)."""
    slow = [item for item in group if suffix(_name(item)) in OFFICE]
    quick = [item for item in group if suffix(_name(item)) not in OFFICE]
    return [*_split(slow, max(jobs * 2, 2)), *_split(quick, TEXT_CALL)]


def _split(items: list[Pending], size: int) -> list[list[Pending]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def _noting(outcome: dict[str, str], on_file: OnFile) -> OnFile:
    """`on_file`, also noting each file's last state by name in `outcome`."""

    def told(event: FileEvent) -> None:
        if event.state != "reading":
            outcome[event.name] = event.state
        on_file(event)

    return told


def _groups(spec: SourceSpec, batch: list[Pending]) -> list[list[Pending]]:
    """The batch split so that each pipeline call has one set of tags and no two files of one name (the pipeline
    reports by name; two files of one name in a container are refused there, the second as unreadable)."""
    by_tags: dict[str, list[list[Pending]]] = defaultdict(list)
    for item in batch:
        calls = by_tags[item.settings]
        home = next((call for call in calls if all(_name(other) != _name(item) for other in call)), None)
        if home is None:
            calls.append(home := [])
        home.append(item)
    return [call for calls in by_tags.values() for call in calls]


def _name(item: Pending) -> str:
    return item.file.name if item.file is not None else ""


def _record(sync: SyncRun, item: Pending, state: str, report: IndexReport) -> None:
    """Remember what became of one file, count it, and say which document changed."""
    spec, targets, tally = sync.spec, sync.targets, sync.tally
    entry, held = item.entry, item.held
    if state == "skipped":  # no converter installed: tried again next run, the old document (if any) stays
        tally.skipped += 1
        if held is not None:
            targets.state.mark_seen(spec.name, [entry.path], sync.run)
        return
    before = held or item.renamed_from
    identity = entry.identity or (before.identity if before and before.identity else "") or item.content
    if state in ("indexed", "unchanged"):
        document = stored_name(_name(item))
        tally.indexed += 1
        if item.renamed_from is not None:
            tally.renamed.add(item.renamed_from.path)
        if held is not None and held.document and container_of(held) != spec.container:
            tally.moved_out.append(held)  # the source now fills another container: the old one loses it
            before = None
        tally.changes.append(_change(spec, document, identity, before, item))
        reason = ""
    else:
        document = held.document if held else ""  # the version indexed before stays until the source drops it
        reason = _reason(_name(item), report)
        tally.unreadable += 1
    targets.state.record(
        spec.name, remembered(sync, item, identity=identity, document=document, reason=reason), sync.run
    )


def remembered(sync: SyncRun, item: Pending, *, identity: str, document: str, reason: str = "") -> Held:
    """What the state file keeps of `item` as listed this run: indexed as `document`, or unreadable for `reason`
    (then with how this run read files: a change of that tries it again)."""
    entry = item.entry
    return Held(
        path=entry.path,
        size=entry.size,
        modified=entry.modified,
        hash=entry.hash,
        identity=identity,
        settings=item.settings,
        content=item.content,
        document=document,
        state="unreadable" if reason else "indexed",
        reason=reason,
        reading=sync.options.reading if reason else "",
    )


def container_of(held: Held) -> str:
    """The container a file was indexed into (the first part of its settings)."""
    return held.settings.split("|", 1)[0]


def _change(spec: SourceSpec, document: str, identity: str, before: Held | None, item: Pending) -> DocumentChange:
    renamed = item.renamed_from.document if item.renamed_from and item.renamed_from.document != document else None
    return DocumentChange(
        container=spec.container,
        document=document,
        identity=identity,
        kind="changed" if before is not None and before.document else "added",
        old_version=before.content if before is not None and before.document else None,
        new_version=item.content,
        previous_name=renamed,
    )


def _reason(name: str, report: IndexReport) -> str:
    """Why the pipeline could not read `name` (its failure lines start with the file's name)."""
    for line in report.failed:
        if line.startswith(f"{name}:") or line.startswith(f"{stored_name(name)}:"):
            return line.partition(":")[2].strip() or "could not be read"
    return "could not be read"
