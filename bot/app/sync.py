"""One sync of one source: list it, compare with what the last run saw, fetch and index what changed, remove what
went, all in one run. `folio sync` calls `sync_source` once per source, under that source's lease.

    list (streamed)  ─► unchanged: seen, nothing read        changed/new ─► pending (bounded by what changed)
    pending, a batch at a time ─► fetch ─► content hash ─► known bad and unchanged? counted, not converted
                                                        ─► rename of a file gone (same ID or content)? same identity
                                                        ─► index_files (the pipeline's own per-file handling)
    after the whole listing: files not seen ─► removed from the index and Folio's copies

A source that cannot be listed whole changes nothing (a listing cut short must not look like deletions). A file that
cannot be fetched or read is counted and named, and never stops the others. A stop (SIGTERM) ends the run after the
batch being indexed, and leaves removals to the next run, which lists again.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from bot import messages, metrics
from bot.app.sync_files import Pending, container_of, index_batch, remembered
from bot.app.sync_run import SyncOptions, SyncRun, SyncTargets, Tally
from bot.ingest.converters import Converters
from bot.ingest.kinds import SUPPORTED, stored_name, suffix
from bot.ingest.lifecycle import remove_files
from bot.models import DocumentChange, utc_now
from bot.sources.listing import Entry, SourceUnavailable, fetch, list_source
from bot.sources.spec import SourceSpec
from bot.sources.state import Held, SyncState
from bot.sources.status import MAX_NAMED, SourceStatus

_LIST_BATCH = 500  # listed entries compared with the state at once
FETCH_BATCH = 200  # changed files fetched by one rclone process


async def sync_source(
    spec: SourceSpec,
    *,
    targets: SyncTargets,
    options: SyncOptions,
    stop: Callable[[], bool],
    previous: SourceStatus | None,
) -> tuple[SourceStatus, list[DocumentChange]]:
    """Sync one source; its status (saved in the state file) and the documents it added, changed or removed."""
    sync = SyncRun(spec=spec, targets=targets, options=options, run=time.time_ns(), tally=Tally(), stop=stop)
    tally = sync.tally
    status = SourceStatus(name=spec.name, container=spec.container, last_run=utc_now())
    try:
        pending = await _compare(sync)
        gone = [held for held in targets.state.unseen(spec.name, sync.run) if held.path not in pending]
        _check_not_emptied(spec, tally, gone)
    except SourceUnavailable as exc:
        status = status.model_copy(
            update={
                "error": str(exc),
                "finished": utc_now(),
                "last_success": previous.last_success if previous else None,
            }
        )
        targets.state.save_status(status)
        return status, []
    targets.on_total(len(pending))
    staging = options.staging / spec.name
    try:
        stopped = await _fetch_and_index(sync, list(pending.values()), gone)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    await _remove_moved_out(tally, targets)
    if not stopped:
        await _remove_gone(sync, gone)
    return _finish(spec, status, targets.state, tally, stopped=stopped), tally.changes


async def _compare(sync: SyncRun) -> dict[str, Pending]:
    """Stream the listing against the state: unchanged files are marked seen, the rest returned (by path)."""
    spec, state, options, tally = sync.spec, sync.targets.state, sync.options, sync.tally
    pending: dict[str, Pending] = {}
    batch: list[Entry] = []

    async def compare() -> None:
        held = state.held(spec.name, [entry.path for entry in batch])
        seen = []
        for entry in batch:
            mine, settings = held.get(entry.path), settings_of(spec, entry.path)
            if mine is not None and mine.settings == settings and mine.lists_as(entry):
                if mine.state == "indexed" or (mine.reading == options.reading and not options.retry_failed):
                    seen.append(entry.path)
                    tally.unchanged += mine.state == "indexed"
                    tally.unreadable += mine.state == "unreadable"
                    continue
            pending[entry.path] = Pending(entry=entry, held=mine, settings=settings)
        state.mark_seen(spec.name, seen, sync.run)
        batch.clear()

    async for entry in list_source(spec, base=options.base, rclone=options.rclone):
        if suffix(entry.path) not in SUPPORTED:
            tally.skipped += 1
            continue
        tally.files += 1
        batch.append(entry)
        if len(batch) >= _LIST_BATCH:
            await compare()
    await compare()
    return pending


def reading_stamp(converters: Converters, max_chars: int | None) -> str:
    """How files are read (the OCR mode and languages, which converters are installed, the size cap): a file that
    failed is tried again when this changes (OCR installed, --ocr force), as when its content does."""
    found = ",".join(
        f"{name}={bool(converters.find(name))}"
        for name in (converters.soffice, converters.ocrmypdf, converters.tesseract)
    )
    return f"ocr={converters.ocr};languages={converters.languages};{found};max={max_chars};timeout={converters.timeout}"


def failure_key(content: str, reading: str) -> str:
    """What a failed file is remembered by: its content as read with these settings."""
    return hashlib.sha256(f"{content}\n{reading}".encode()).hexdigest()


def settings_of(spec: SourceSpec, path: str) -> str:
    """What, besides the file, shapes its document: the container and its tags (a change re-indexes it)."""
    return "|".join([spec.container, *sorted(str(tag) for tag in spec.tags_for(path))])


def _check_not_emptied(spec: SourceSpec, tally: Tally, gone: list[Held]) -> None:
    """A listing with no file at all where the last run indexed some is far likelier a wrong path or an emptied
    mount than a deliberate deletion of everything: refuse it rather than remove every document."""
    if tally.files == 0 and any(held.document for held in gone):
        raise SourceUnavailable(messages.source_listed_empty(spec.name, spec.from_, len(gone)))


async def _fetch_and_index(sync: SyncRun, pending: list[Pending], gone: list[Held]) -> bool:
    """Fetch `pending` FETCH_BATCH files at a time (one rclone process each) and index them; True when a stop came
    before all were done."""
    spec, options = sync.spec, sync.options
    for start in range(0, len(pending), FETCH_BATCH):
        if sync.stop():
            return True
        batch = pending[start : start + FETCH_BATCH]
        into = options.staging / spec.name / str(start)
        complaint = await fetch(
            spec, [item.entry.path for item in batch], into, base=options.base, rclone=options.rclone
        )
        ready = []
        for item in batch:
            ready.append(await _arrived(sync, item, into, complaint))
        fetched = [item for item in ready if item is not None]
        stopped = await index_batch(sync, _unclashed(sync, _matched_renames(fetched, gone), gone))
        shutil.rmtree(into, ignore_errors=True)
        if stopped:
            return True
    return False


async def _arrived(sync: SyncRun, item: Pending, into: Path, complaint: str | None) -> Pending | None:
    """The pending file with where it is and its content hash; None when it is not to be read (not fetched, or
    known bad and unchanged in content)."""
    spec, options, state, tally = sync.spec, sync.options, sync.targets.state, sync.tally
    path = spec.folder(options.base) / item.entry.path if spec.remote is None else into / item.entry.path
    try:
        content = await asyncio.to_thread(_sha256, path)
    except OSError as exc:
        why = messages.source_not_fetched(complaint or exc.strerror or str(exc))
        tally.unreadable += 1
        tally.failures.append(f"{item.entry.path}: {why}")
        if item.held is not None:  # still there, we just could not read it now: neither removed nor remembered
            state.mark_seen(spec.name, [item.entry.path], sync.run)
        return None
    held = item.held
    if (
        held
        and held.state == "unreadable"
        and (held.content, held.settings, held.reading) == (content, item.settings, options.reading)
    ):
        if not options.retry_failed:  # the same bytes that failed before: not converted again
            state.record(spec.name, _relisted(held, item.entry), sync.run)
            tally.unreadable += 1
            return None
    return Pending(entry=item.entry, held=held, settings=item.settings, file=path, content=content)


def _unclashed(sync: SyncRun, items: list[Pending], gone: list[Held]) -> list[Pending]:
    """The files whose document name no other file of a source holds in the container (a file gone this run, or
    the file itself before, may): fetched copies do not stay, so the pipeline cannot see the other file itself, and
    one would silently replace the other. A clash is recorded as unreadable, with what to do."""
    spec, state = sync.spec, sync.targets.state
    leaving = {(spec.name, held.path) for held in gone}
    kept = []
    for item in items:
        name = stored_name(item.file.name if item.file is not None else "")
        others = [
            h for h in state.holders(spec.container, name) if h != (spec.name, item.entry.path) and h not in leaving
        ]
        if not others:
            kept.append(item)
            continue
        source, path = others[0]
        why = messages.source_name_taken(name, source=source, path=path)
        document = item.held.document if item.held else ""
        state.record(
            spec.name, remembered(sync, item, identity=item.entry.identity, document=document, reason=why), sync.run
        )
        sync.tally.unreadable += 1
    return kept


def _relisted(held: Held, entry: Entry) -> Held:
    """`held` as listed this time (its size, time, hash; its provider ID once it has one), otherwise as it was."""
    identity = entry.identity or held.identity
    return replace(held, size=entry.size, modified=entry.modified, hash=entry.hash, identity=identity)


def _matched_renames(fetched: list[Pending], gone: list[Held]) -> list[Pending]:
    """A new file that is a gone one moved or renamed (same provider ID, or same content) takes over its identity;
    the gone one's document is then removed without a change of its own (see `_remove_gone`)."""
    matched, taken = [], {item.renamed_from.path for item in fetched if item.renamed_from}
    for item in fetched:
        twin = None
        if item.held is None:
            twin = next((held for held in gone if held.path not in taken and _same_object(held, item)), None)
        if twin is not None:
            taken.add(twin.path)
            item = Pending(
                entry=item.entry,
                held=None,
                settings=item.settings,
                file=item.file,
                content=item.content,
                renamed_from=twin,
            )
        matched.append(item)
    return matched


def _same_object(held: Held, item: Pending) -> bool:
    """The provider's object ID decides when both have one; without, the same content makes the same object."""
    if held.identity and item.entry.identity:
        return held.identity == item.entry.identity
    return bool(held.document) and held.content == item.content


async def _remove_gone(sync: SyncRun, gone: list[Held]) -> None:
    """Take out of the index the documents of files no longer at the source, unless a file seen this run is now
    indexed by that name (moved to another folder). A renamed file's old document goes without a change of its own:
    its successor's change names it (`previous_name`)."""
    spec, targets, tally = sync.spec, sync.targets, sync.tally
    state = targets.state
    doomed = [held for held in gone if held.document and not state.document_in_use(spec.name, held.document, sync.run)]
    if doomed:
        indexed = {held.file: held for held in await targets.index.files(spec.container)}
        files = [indexed[held.document] for held in doomed if held.document in indexed]
        await remove_files(targets.index, targets.documents, files)
    for held in gone:
        state.forget(spec.name, held.path)
        if held in doomed and held.path not in tally.renamed:
            tally.removed += 1
            tally.changes.append(
                DocumentChange(
                    container=spec.container,
                    document=held.document,
                    identity=held.identity or held.content,
                    kind="removed",
                    old_version=held.content,
                )
            )


async def _remove_moved_out(tally: Tally, targets: SyncTargets) -> None:
    """Take documents out of the container a source filled before its `container:` was changed."""
    for container in sorted({container_of(held) for held in tally.moved_out}):
        names = {held.document for held in tally.moved_out if container_of(held) == container}
        files = [held for held in await targets.index.files(container) if held.file in names]
        await remove_files(targets.index, targets.documents, files)
        for held in files:
            tally.changes.append(
                DocumentChange(
                    container=container,
                    document=held.file,
                    identity=held.source or held.file,
                    kind="removed",
                    old_version=held.fingerprint,
                )
            )


async def forget_source(name: str, targets: SyncTargets) -> list[DocumentChange]:
    """Remove the documents a source no longer in the sources file put in the index, and forget it."""
    by_container: dict[str, set[str]] = {}
    for held in targets.state.all_files(name):
        if held.document:
            by_container.setdefault(container_of(held), set()).add(held.document)
    changes = []
    for container, names in sorted(by_container.items()):
        files = [held for held in await targets.index.files(container) if held.file in names]
        await remove_files(targets.index, targets.documents, files)
        changes += [
            DocumentChange(
                container=container,
                document=held.file,
                identity=held.source or held.file,
                kind="removed",
                old_version=held.fingerprint,
            )
            for held in files
        ]
    targets.state.drop(name)
    return changes


def _finish(spec: SourceSpec, status: SourceStatus, state: SyncState, tally: Tally, *, stopped: bool) -> SourceStatus:
    known = state.unreadable(spec.name, limit=MAX_NAMED)
    done = status.model_copy(
        update={
            "finished": utc_now(),
            "listed": True,
            "files": tally.files,
            "indexed": tally.indexed,
            "unchanged": tally.unchanged,
            "unreadable": tally.unreadable,
            "removed": tally.removed,
            "skipped": tally.skipped,
            "unreadable_files": tuple([*tally.failures, *known][:MAX_NAMED]),
            "last_success": status.last_run,
            "stopped": stopped,
        }
    )
    state.save_status(done)
    counts = (done.files, done.indexed, done.unchanged, done.unreadable, done.removed, done.skipped)
    metrics.source_synced(spec.name, counts=counts, last_success=time.time())
    return done


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
