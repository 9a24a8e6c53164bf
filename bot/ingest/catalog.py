"""Indexes a folder described by a `catalog.yaml` (tags and date per file), such as the shipped sample corpus.

files:
  refund_policy_2025.pdf:
    tags: ['department:finance', 'year:2025']
    date: '2025-01-15'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from bot.errors import ConfigurationError
from bot.ingest.pipeline import IndexOptions, IndexReport, collect_files, index_files
from bot.models import Tag
from bot.retrieval import IndexWriter

if TYPE_CHECKING:
    from bot.documents import DocumentStore

CATALOG = "catalog.yaml"


def read_catalog(folder: Path) -> dict[str, tuple[tuple[Tag, ...], str | None]]:
    """File name -> (tags, date) from the folder's catalog.yaml; an empty mapping when there is none."""
    path = folder / CATALOG
    if not path.exists():
        return {}
    try:
        entries = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("files") or {}
        return {
            str(name): (
                tuple(Tag.parse(str(tag)) for tag in (entry or {}).get("tags") or ()),
                str((entry or {}).get("date")) if (entry or {}).get("date") else None,
            )
            for name, entry in entries.items()
        }
    except (yaml.YAMLError, AttributeError, ValueError) as exc:
        raise ConfigurationError(f"{path} is malformed ({exc}); regenerate it or fix the entry it names.") from exc


async def index_catalog(
    folder: Path, writer: IndexWriter, *, container: str, documents: DocumentStore | None = None
) -> IndexReport:
    """Index the files of `folder` into `container`, with the tags and date its catalog gives.

    With a catalog, only the files it lists are documents: a README beside them is not.
    """
    catalog = read_catalog(folder)
    total = IndexReport()
    for path in collect_files([folder]).files:
        if catalog and path.name not in catalog:
            continue
        tags, date = catalog.get(path.name, ((), None))
        report = await index_files(
            [path], writer, IndexOptions(container=container, tags=tags, date=date, documents=documents)
        )
        total.add(report)
    return total
