"""A real Folio document site over files indexed for real, and how a test reads the viewer page it serves."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import aiohttp
from yarl import URL

from bot.cli.document_links import DocumentServer, serve_documents
from bot.documents import DocumentStore, Links
from bot.ingest import IndexOptions, index_files
from bot.models import Chunk, Scope
from bot.retrieval.local import LocalRetriever
from bot.slack.site import Bind
from bot.viewer.pages import CharBox, text_layer

KEY = b"viewer-test-key-" * 2
MARK = re.compile(r'<mark aria-hidden="true" style="left:([\d.]+)%;top:([\d.]+)%;width:([\d.]+)%;height:([\d.]+)%">')
IMAGE = re.compile(r'<img src="([^"]+)"')


@dataclass(frozen=True)
class Box:
    left: float
    top: float
    right: float
    bottom: float

    def holds(self, x: float, y: float) -> bool:
        return self.left <= x <= self.right and self.top <= y <= self.bottom


@dataclass
class Site:
    base: str
    store: DocumentStore
    index: LocalRetriever
    container: str

    @property
    def links(self) -> Links:
        return Links(documents=self.store, public_url=self.base, key=KEY)

    async def chunk(self, question: str, file: str) -> Chunk:
        """The best passage of `file` for `question`, as a search returns it."""
        found = await self.index.search(question, Scope(container=self.container), top=20)
        return next(chunk for chunk in found if chunk.file == file)

    async def get(self, url: str) -> tuple[int, dict[str, str], bytes]:
        async with aiohttp.ClientSession() as http, http.get(URL(url, encoded=True)) as response:
            return response.status, dict(response.headers), await response.read()

    async def view(self, chunk: Chunk) -> tuple[int, dict[str, str], str]:
        url = self.links.link_for(chunk)
        assert url is not None
        status, headers, body = await self.get(url)
        return status, headers, body.decode()


@asynccontextmanager
async def indexed_site(files: list[Path], data: Path, *, container: str = "office") -> AsyncIterator[Site]:
    """`files` indexed for real (conversion and OCR included) and served on a loopback port."""
    store = DocumentStore(data / "documents")
    index = LocalRetriever(data / "index.sqlite")
    await index_files(files, index, IndexOptions(container=container, documents=store))
    ports: list[int] = []
    try:
        async with serve_documents(
            DocumentServer(store=store, key=KEY), Bind(host="127.0.0.1", port=0), started=ports.append
        ):
            yield Site(base=f"http://127.0.0.1:{ports[0]}", store=store, index=index, container=container)
    finally:
        await index.close()


def marks(page: str) -> list[Box]:
    """The highlight boxes of a viewer page, in percent of the page image."""
    return [Box(float(l), float(t), float(l) + float(w), float(t) + float(h)) for l, t, w, h in MARK.findall(page)]


def passage_chars(copy: Path, page: int, passage: str) -> tuple[list[CharBox], list[CharBox]]:
    """The boxes of the page's characters inside the passage and outside it. The passage is found here on its own
    terms (its words in order, any white space or hyphen between them) so the test does not trust the viewer's
    matching to check the viewer."""
    layer = text_layer(copy, page)
    words = [re.escape(word) for word in passage.split()]
    pattern = r"[\s\-\u00ad\x02]*".join(words)
    found = [match.span() for match in re.finditer(pattern, layer.text)]
    assert len(found) == 1, (passage, layer.text)
    start, end = found[0]
    inside = [box for index, box in enumerate(layer.boxes) if box and start <= index < end]
    outside = [box for index, box in enumerate(layer.boxes) if box and not start <= index < end]
    return inside, outside


def assert_highlights_exactly(page: str, copy: Path, number: int, passage: str) -> None:
    """Every character of the passage lies under a highlight, and no character outside it does."""
    boxes = marks(page)
    assert boxes, "no highlight"
    inside, outside = passage_chars(copy, number, passage)
    centre = lambda box: ((box.left + box.right) / 2, (box.top + box.bottom) / 2)  # noqa: E731
    uncovered = [box for box in inside if not any(mark.holds(*centre(box)) for mark in boxes)]
    beyond = [box for box in outside if any(mark.holds(*centre(box)) for mark in boxes)]
    assert (uncovered, beyond) == ([], [])


def image_url(site: Site, page: str) -> str:
    return site.base + unescape(IMAGE.search(page).group(1))  # type: ignore[union-attr]


def soon(days: int = 1) -> int:
    return int(time.time()) + days * 86400
