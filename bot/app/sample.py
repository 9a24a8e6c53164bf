"""The sample corpus that ships with Folio, indexed into container `sample` the first time a local index is used."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.documents import DocumentStore
    from bot.retrieval.local import LocalRetriever

log = logging.getLogger(__name__)

SAMPLE_CONTAINER = "sample"  # the shipped sample corpus; what the CLI searches when no container is named
SAMPLE_CORPUS = Path(__file__).resolve().parent.parent / "sample_corpus"


async def ensure_sample_index(index: LocalRetriever, documents: DocumentStore | None) -> None:
    """Index the sample corpus into `sample` unless it is there already, keeping a copy of each file for links."""
    indexed = await index.count(SAMPLE_CONTAINER) > 0
    copies = documents is None or all(
        documents.stored(SAMPLE_CONTAINER, path.name)
        for path in SAMPLE_CORPUS.glob("*.pdf")  # its documents
    )
    # An index made before copies were kept is indexed again: unchanged files are skipped and only copied.
    if indexed and copies:
        return
    from bot.ingest.catalog import index_catalog  # the readers (pypdf) load only when there is indexing to do

    report = await index_catalog(SAMPLE_CORPUS, index, container=SAMPLE_CONTAINER, documents=documents)
    for failure in report.failed:
        log.warning("sample corpus: %s", failure)
