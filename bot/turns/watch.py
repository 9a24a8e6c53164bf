"""The watch: documents a run changed or removed -> the threads whose answers cited them -> one note each.

    documents_changed (bot.app.changes)
      -> watch_changes: the changed and removed documents' threads (a lookup: bot.store.watch), only those that
         answered within FOLIO_WATCH_DAYS and whose channel watches; each thread's cited passages compared with
         the document's passages now (`findings`, pure): the same text on any page of it still stands
      -> one Note per thread, queued in the outbox (durable) -> bot.turns.watch_post posts it

A passage is compared by its fingerprint (`passage_fingerprint`), the same one each citation kept when it was shown.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot import messages
from bot.config import ChannelPolicy
from bot.errors import NotConnected
from bot.models import Chunk, Citation, Conversation, DocumentChange, is_direct_message, passage_fingerprint
from bot.retrieval import SearchIndex
from bot.store import ConversationStore, ThreadKey
from bot.store.watch import Note

log = logging.getLogger(__name__)

Document = tuple[str, str]  # (container, document as the index names it)
NOW_READS = 300  # characters of the new text a note quotes


@dataclass(frozen=True)
class Finding:
    """One citation of a thread whose passage changed (`now_reads`: the cited page's text now) or went."""

    citation: Citation
    removed: bool
    now_reads: str = ""


@dataclass(frozen=True)
class WatchRun:
    """What one run of the watch did: for `folio watch`, the log and the metrics."""

    documents: int = 0
    threads: int = 0
    notes: int = 0


def findings(
    conversation: Conversation, changes: Mapping[Document, DocumentChange], now: Mapping[Document, Sequence[Chunk]]
) -> list[Finding]:
    """The citations of the thread's kept answers whose passages no longer stand, the latest answer's first, one a
    document page. A citation stands when every passage it relied on is, word for word, somewhere in the document
    now (the same or another page); one of a record made before citations kept passages is checked by its page."""
    found: dict[tuple[str, str, int | None], Finding] = {}
    for turn in reversed(conversation.turns):
        for citation in () if turn.set_aside else turn.citations:
            document = (citation.container, citation.file)
            place = (*document, citation.page)
            change = changes.get(document)
            if change is None or place in found:
                continue
            passages = now.get(document, ())
            if change.kind == "removed" or not passages:
                found[place] = Finding(citation=citation, removed=True)
            elif not _stands(citation, passages):
                found[place] = Finding(citation=citation, removed=False, now_reads=_page_text(passages, citation))
    return list(found.values())


def _stands(citation: Citation, passages: Sequence[Chunk]) -> bool:
    if not citation.passages:  # an older record: the page can only be said to be there
        return any(chunk.cited_page == citation.page for chunk in passages)
    held = {passage_fingerprint(chunk.text) for chunk in passages}
    return all(passage.fingerprint in held for passage in citation.passages)


def _page_text(passages: Sequence[Chunk], citation: Citation) -> str:
    on_page = [chunk.text for chunk in passages if chunk.cited_page == citation.page] or [passages[0].text]
    text = " ".join(" ".join(on_page).split())
    return text if len(text) <= NOW_READS else text[: NOW_READS - 1].rstrip() + "…"


def note_text(found: Sequence[Finding], *, reachable: bool, day: str) -> str:
    """The note a person reads: each citation and what happened to it; only that a source is gone when the thread's
    scope no longer reaches the document (what it says now is not this thread's to read)."""
    if not reachable:
        return messages.WATCH_SOURCE_GONE
    lines = [messages.WATCH_NOTE_HEAD]
    for finding in found:
        citation = finding.citation
        name = escape(f"[{citation.label}] {citation.title}{citation.place}")
        if finding.removed:
            lines.append(messages.watch_removed(name, day))
        else:
            place = escape(citation.place.lstrip(", ·")) or "it"
            lines.append(messages.watch_changed(name, place, day, escape(finding.now_reads)))
    return "\n".join(lines)


def escape(text: str) -> str:
    """Document text and names as mrkdwn shows them: `<!channel>` or `<@U...>` in a document stays text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def note_id(thread: ThreadKey, changes: Sequence[DocumentChange]) -> str:
    """The same thread and the same changes give the same id: found twice, queued once."""
    versions = sorted(f"{c.container}/{c.document}@{c.new_version or 'removed'}" for c in changes)
    return hashlib.sha256("\n".join([str(thread), *versions]).encode()).hexdigest()[:24]


async def watch_changes(
    changes: Sequence[DocumentChange],
    *,
    store: ConversationStore,
    retriever: SearchIndex,
    policy: ChannelPolicy | None,
    watch_days: int,
    now: datetime | None = None,
) -> WatchRun:
    """Find the threads whose cited passages these changes changed or removed, and queue one note for each."""
    watched = watched_documents(changes)
    if not watched:
        return WatchRun()
    now = now or datetime.now(UTC)
    cited = await store.threads_citing(list(watched), since=now.timestamp() - watch_days * 86400)
    threads = list(dict.fromkeys(thread for found in cited.values() for thread in found))
    texts = {
        doc: await retriever.passages(doc[0], watched[doc].document)
        for doc, found in cited.items()
        if found and watched[doc].kind != "removed"
    }
    outbox, notes, day = store.outbox(), 0, f"{now.day} {now:%b}"
    for thread in threads:
        if not _watches(policy, thread):
            continue
        conversation = await store.load(thread)
        found = findings(conversation, watched, texts) if conversation is not None else []
        if not found:
            continue
        assert conversation is not None  # found only in a conversation
        reachable = all(_reaches(policy, thread, conversation, f.citation) for f in found)
        mine = list(dict.fromkeys(watched[(f.citation.container, f.citation.file)] for f in found))
        note = Note(
            id=note_id(thread, mine),
            team=thread.team,
            channel=thread.channel,
            thread_ts=thread.thread_ts,
            text=note_text(found, reachable=reachable, day=day),
            trigger=", ".join(sorted({f"{c.container}/{c.document} {c.kind} on {day}" for c in mine})),
        )
        notes += await outbox.add(note)
    return WatchRun(documents=len(set(watched.values())), threads=len(threads), notes=notes)


def watched_documents(changes: Sequence[DocumentChange]) -> dict[Document, DocumentChange]:
    """The documents whose citations a run may have changed, by the name citations know them by: a renamed
    document's old name too (its passages are read under the new one)."""
    watched: dict[Document, DocumentChange] = {}
    for change in changes:
        if change.kind != "added":
            watched[(change.container, change.document)] = change
            if change.previous_name:
                watched[(change.container, change.previous_name)] = change
    return watched


def _watches(policy: ChannelPolicy | None, thread: ThreadKey) -> bool:
    """Whether the thread's channel watches (a channel rule `watch: false` turns it off; DMs follow `dm`)."""
    if policy is None:
        return True
    try:
        return policy.rule_for(thread.channel, is_dm=is_direct_message(thread.channel)).watch
    except NotConnected:  # DMs under `access` rules, or a channel no longer connected (its note says only "gone")
        return True


def _reaches(policy: ChannelPolicy | None, thread: ThreadKey, conversation: Conversation, citation: Citation) -> bool:
    """Whether the thread may still read the cited document: today's channel rule where one names the channel,
    else the scope its last turn searched (DMs under access rules: resolved per person at the next turn)."""
    scope = conversation.scope
    if policy is not None and not is_direct_message(thread.channel):
        try:
            scope = policy.scope_for(thread.channel, tags=conversation.narrowing)
        except (NotConnected, ValueError):
            return False
    return citation.container in scope.containers
