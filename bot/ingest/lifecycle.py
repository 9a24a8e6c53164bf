"""Taking documents out: a removed file loses its passages, its vectors and Folio's copy, on either backend.

`folio remove` names the files; `folio index PATH --prune` removes the files of a container that came from PATH and
are no longer there (`pipeline.gone_files`). Links posted before then answer 410 Gone (see `DocumentStore.remove`),
and a thread that cited one forgets it on its next turn (`forget_removed`): its passages, and the earlier answers
that cited it, which are set aside (`Conversation.forget`). A passage re-indexed with other words is forgotten the
same way: what a thread shows must still stand in the index as it was shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING

from bot.models import Chunk, Conversation, display_name, passage_fingerprint, utc_now
from bot.retrieval import IndexedFile, IndexWriter, SearchIndex

if TYPE_CHECKING:
    from bot.documents import DocumentStore


def named(indexed: Sequence[IndexedFile], names: Sequence[str]) -> tuple[list[IndexedFile], list[str]]:
    """(the indexed files `names` name, the names that name none); a path names the file of its last part. A file
    is named as people see it (`deck.pptx`) or as it is stored (`deck.pptx.pdf`, the form older lists showed)."""
    by_name = {display_name(held.file): held for held in indexed} | {held.file: held for held in indexed}
    found: dict[str, IndexedFile] = {}
    unknown: list[str] = []
    for name in names:
        held = by_name.get(name) or by_name.get(PurePath(name).name)
        if held is None:
            unknown.append(name)
        else:
            found.setdefault(held.file, held)
    return list(found.values()), unknown


async def remove_files(
    index: IndexWriter, documents: DocumentStore | None, files: Sequence[IndexedFile]
) -> list[IndexedFile]:
    """Remove each file from its container: passages and vectors first, then the kept copy. Returns `files`."""
    at = utc_now()
    for held in files:
        await index.delete_file(held.container, held.file)
        if documents is not None:
            await documents.remove(held.container, held.file, at=at)
    if files:
        await index.compact()
    return list(files)


async def forget_removed(conversation: Conversation, index: SearchIndex) -> bool:
    """Forget the sources of a conversation that no longer stand in the index as they were shown: their document
    was taken out, or re-indexed without that text (the passage's words decide, not the file name). A follow-up
    then cannot cite them, nor the model quote them from its context (see `Conversation.forget`)."""
    shown = list(conversation.sources.values())
    if not shown:
        return False
    held = await index.passage_texts(shown)
    return conversation.forget(lambda chunk: not still_stands(chunk, held))


def still_stands(chunk: Chunk, held: Mapping[str, str]) -> bool:
    """Whether the index still holds `chunk` as it was shown (`held`: id -> the text it holds now)."""
    now = held.get(chunk.id)
    if now is None:
        return False
    return now == chunk.text or passage_fingerprint(now) == chunk.fingerprint  # the same words, spaced otherwise
