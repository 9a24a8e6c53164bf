"""Taking documents out: a removed file loses its passages, its vectors and Folio's copy, on either backend.

`folio remove` names the files; `folio index PATH --prune` removes the files of a container that came from PATH and
are no longer there (`pipeline.gone_files`). Links posted before then answer 410 Gone (see `DocumentStore.remove`),
and a thread that cited one forgets it on its next turn (`forget_removed`): its passages, and the earlier answers
that cited it, which are set aside (`Conversation.forget`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING

from bot.models import Conversation, display_name, utc_now
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
    """Forget the sources of a conversation whose document was taken out since they were shown: a follow-up cannot
    cite a removed document, nor the model quote it from its context (see `Conversation.forget`)."""
    cited = {(chunk.container, chunk.file) for chunk in conversation.sources.values()}
    if not cited:
        return False
    held = await index.still_indexed(cited)
    return conversation.forget(lambda chunk: (chunk.container, chunk.file) not in held)
