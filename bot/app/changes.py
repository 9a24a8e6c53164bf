"""Where the documents that a run added, changed or removed go: every `folio sync`, `folio index` and `folio remove`
calls `documents_changed` once with its list (`bot.models.DocumentChange`).

The changes are logged (one line per run, one debug line per document) and handed to the watch (bot.turns.watch):
threads whose cited passages changed or went get one note each, queued durably in Redis, then posted here when
Slack is configured (else by `folio watch --post` or `folio serve`). A run that only added documents touches nothing.
A watch that fails (Redis or Slack down) is logged and leaves the run's own work and exit status alone.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass

from bot import messages
from bot.app import Folio, builders, open_store
from bot.app.redis_server import running_socket
from bot.config.policy_file import PolicyFile
from bot.metrics import count_watch
from bot.models import DocumentChange
from bot.retrieval import IndexedFile
from bot.store import ConversationStore
from bot.store.watch import WatchRecord
from bot.turns.watch import WatchRun, watch_changes
from bot.turns.watch_post import NOT_POSTED, post_notes

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WatchReport:
    """A run's watch: what it checked and found, and how many notes it posted or left waiting."""

    run: WatchRun = WatchRun()
    posted: int = 0
    pending: int = 0


async def documents_changed(
    changes: Sequence[DocumentChange], *, folio: Folio, store: ConversationStore | None = None
) -> WatchReport:
    """Hand a run's document changes to the watch: find the threads to tell, queue their notes, post them."""
    if not changes:
        return WatchReport()
    kinds = Counter(change.kind for change in changes)
    log.debug("documents changed: %s", ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items())))
    for change in changes:
        log.debug("document %s: %s/%s (%s)", change.kind, change.container, change.document, change.identity)
    if all(change.kind == "added" for change in changes):
        return WatchReport()  # nothing cited them yet
    if store is None and not _threads_may_exist(folio):
        return WatchReport()  # the terminal alone: no Slack, no serving Folio's Redis, so no thread to tell
    try:
        report = await _watch(changes, folio=folio, store=store)
    except NOT_POSTED as exc:  # the notes found stay queued
        log.warning("the watch did not run to its end: %s", exc)
        return WatchReport()
    count_watch(report.run.documents, report.run.threads, report.run.notes, report.posted)
    log.info(
        messages.watch_run(report.run.documents, report.run.threads, report.run.notes, report.posted, report.pending)
    )
    return report


def _threads_may_exist(folio: Folio) -> bool:
    """Whether any Slack thread could have cited a document: Slack configured, a Redis named, or a running `folio
    serve`'s embedded Redis in the data folder. Otherwise the watch would start a Redis only to find nothing."""
    settings = folio.settings
    return bool(
        folio.store is not None
        or settings.slack_configured
        or settings.redis_url
        or running_socket(settings.folio_data_dir)
    )


async def _watch(changes: Sequence[DocumentChange], *, folio: Folio, store: ConversationStore | None) -> WatchReport:
    async with AsyncExitStack() as stack:
        if store is None:
            store = folio.store or (await stack.enter_async_context(open_store(folio.settings))).conversations
        policy = folio.policy.current() if isinstance(folio.policy, PolicyFile) else folio.policy
        run = await watch_changes(
            changes, store=store, retriever=folio.retriever, policy=policy, watch_days=folio.settings.folio_watch_days
        )
        slack = folio.slack
        if slack is None and folio.settings.slack_configured:
            session = builders.slack_http_session()
            stack.push_async_callback(session.close)
            slack = builders.slack_client(folio.settings, session)
        posted = await post_notes(store, slack) if slack is not None else 0
        outbox = store.outbox()
        await outbox.record(
            WatchRecord(at=time.time(), documents=run.documents, threads=run.threads, notes=run.notes, posted=posted)
        )
        return WatchReport(run=run, posted=posted, pending=await outbox.pending())


def index_changes(before: Sequence[IndexedFile], after: Sequence[IndexedFile]) -> list[DocumentChange]:
    """What `folio index` or `folio remove` changed in one container: the files it holds before and after, compared
    by name and fingerprint (the identity of a file indexed from a path is that path)."""
    old = {held.file: held for held in before}
    new = {held.file: held for held in after}
    changes = []
    for name, held in new.items():
        was = old.get(name)
        if was is None or was.fingerprint != held.fingerprint:
            changes.append(
                DocumentChange(
                    container=held.container,
                    document=name,
                    identity=held.source or name,
                    kind="added" if was is None else "changed",
                    old_version=was.fingerprint if was else None,
                    new_version=held.fingerprint,
                )
            )
    for name, was in old.items():
        if name not in new:
            changes.append(
                DocumentChange(
                    container=was.container,
                    document=name,
                    identity=was.source or name,
                    kind="removed",
                    old_version=was.fingerprint,
                )
            )
    return changes


__all__ = ["WatchReport", "documents_changed", "index_changes"]
