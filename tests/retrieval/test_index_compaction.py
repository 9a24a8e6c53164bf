"""Issue 21 item 2: files indexed again leave no stale search data behind.

Seen: the bench's index, re-indexed a few times (each file's passages replaced), held 2 MB of FTS5 data for what a
fresh index holds in 430 KB (old segments and delete markers), and every search read through it: 1.6x the CPU of a
search a turn (benchmarks/RESULTS.md, "Search CPU under the harness"). After a run that wrote, the index is compacted.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.ingest import IndexOptions, index_files
from bot.models import Scope
from bot.retrieval.local import LocalRetriever

TOPICS = ["refunds", "travel", "hearing aids", "parental leave", "gym membership", "eye exams", "copayments"]


def write_documents(folder: Path, version: int) -> list[Path]:
    folder.mkdir(exist_ok=True)
    paths = []
    for number, topic in enumerate(TOPICS):
        path = folder / f"policy{number}.md"
        lines = [
            f"Section {n}: {topic} are handled by team {n * version} within {n + version} days." for n in range(60)
        ]
        path.write_text("\n\n".join(lines), encoding="utf-8")
        paths.append(path)
    return paths


def fts_blocks(index: Path) -> int:
    db = sqlite3.connect(index)
    try:
        return db.execute("SELECT count(*) FROM chunks_fts_data").fetchone()[0]
    finally:
        db.close()


async def indexed(path: Path, folder: Path, versions: list[int]) -> list[str]:
    """Index the documents once per version (each run replacing every file), then search them."""
    retriever = LocalRetriever(path)
    try:
        for version in versions:
            await index_files(write_documents(folder, version), retriever, IndexOptions(container="c"))
        found = await retriever.search("how long do refunds take", Scope(container="c"), top=6)
        return [f"{chunk.file}:{chunk.page}:{chunk.text[:40]}:{chunk.score}" for chunk in found]
    finally:
        await retriever.close()


async def test_files_indexed_again_leave_the_index_as_compact_as_a_fresh_one(tmp_path: Path) -> None:
    again = await indexed(tmp_path / "again.sqlite", tmp_path / "docs", [1, 2, 3, 4, 5])
    fresh = await indexed(tmp_path / "fresh.sqlite", tmp_path / "fresh", [5])

    assert fts_blocks(tmp_path / "again.sqlite") == fts_blocks(tmp_path / "fresh.sqlite")
    assert again == fresh  # the same passages, in the same order, with the same scores
