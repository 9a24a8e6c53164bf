"""Where the documents that a run added, changed or removed go: every `folio sync`, `folio index` and `folio remove`
calls `documents_changed` once with its list (`bot.models.DocumentChange`).

Its consumer is the watch (issue 34: threads whose cited passages changed get one note each); until it exists, the
changes are logged at debug level (`folio -v`), one line per run and one per document, and nothing else happens.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from bot.models import DocumentChange
from bot.retrieval import IndexedFile

log = logging.getLogger(__name__)


async def documents_changed(changes: Sequence[DocumentChange]) -> None:
    """Hand a run's document changes to whatever watches them (today: the log)."""
    if not changes:
        return
    kinds = Counter(change.kind for change in changes)
    log.debug("documents changed: %s", ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items())))
    for change in changes:
        log.debug("document %s: %s/%s (%s)", change.kind, change.container, change.document, change.identity)


def index_changes(before: Sequence[IndexedFile], after: Sequence[IndexedFile]) -> list[DocumentChange]:
    """What `folio index` or `folio remove` changed in one container: the files it holds before and after, compared
    by name and fingerprint (the identity of a file indexed from a path is that path)."""
    old = {held.file: held for held in before}
    new = {held.file: held for held in after}
    changes = []
    for name, held in new.items():
        was = old.get(name)
        if was is None or was.fingerprint != held.fingerprint:
            changes.append(DocumentChange(
                container=held.container, document=name, identity=held.source or name,
                kind="added" if was is None else "changed", old_version=was.fingerprint if was else None,
                new_version=held.fingerprint,
            ))  # fmt: skip
    for name, was in old.items():
        if name not in new:
            changes.append(DocumentChange(
                container=was.container, document=name, identity=was.source or name, kind="removed",
                old_version=was.fingerprint,
            ))  # fmt: skip
    return changes


__all__ = ["documents_changed", "index_changes"]
