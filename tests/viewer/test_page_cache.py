"""Drawn pages are kept on disk and served from there, dropped when the document changes, and held under a bound."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.app import SAMPLE_CORPUS
from bot.documents import DocumentStore
from bot.viewer.cache import PageCache
from tests.viewer.site import image_url, indexed_site

PDF = "refund_policy_2026.pdf"


async def test_a_page_is_drawn_once_then_served_from_disk_and_redrawn_when_the_document_changes(tmp_path: Path) -> None:
    async with indexed_site([SAMPLE_CORPUS / PDF], tmp_path) as site:
        chunk = await site.chunk("annual plans refund pro rata", PDF)
        url = image_url(site, (await site.view(chunk))[2])
        drawn = (await site.get(url))[2]
        [cached] = (tmp_path / "documents" / ".pages" / "office" / PDF).glob("*.png")
        assert cached.read_bytes() == drawn
        cached.write_bytes(b"\x89PNG kept")  # what the cache holds is what is served
        assert (await site.get(url))[2] == b"\x89PNG kept"

        changed = tmp_path / PDF
        shutil.copyfile(SAMPLE_CORPUS / "refund_policy_2025.pdf", changed)
        assert await site.store.keep("office", PDF, changed)  # indexed again: another document under that name
        assert not cached.exists()
        redrawn = (await site.get(url))[2]
        assert redrawn.startswith(b"\x89PNG\r\n") and redrawn != drawn


async def test_the_cache_keeps_under_its_bound_dropping_the_least_recently_shown(tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "documents")
    assert await store.keep("office", PDF, SAMPLE_CORPUS / PDF)
    copy = store.stored("office", PDF)
    first = await PageCache(store).image("office", PDF, copy, 1)
    cache = PageCache(store, limit=int(len(first) * 2.5))
    for page in (1, 2, 1, 3):  # page 1 shown again after page 2
        await cache.image("office", PDF, copy, page)
    kept = sorted(path.name.rsplit("-", 1)[1] for path in (tmp_path / "documents" / ".pages").rglob("*.png"))
    assert kept == ["1.png", "3.png"]  # page 2, the least recently shown, went first
    total = sum(path.stat().st_size for path in (tmp_path / "documents" / ".pages").rglob("*.png"))
    assert total <= cache.limit
