"""The copies Folio keeps of files that are not PDFs open as what they are: a CSV table as text/csv, a web page or
a mail as the plain text Folio read from it (`guide.html.txt`), never as HTML a browser would run."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bot.cli.document_links import DocumentServer
from bot.documents import DocumentStore, signed_path

KEY = b"kept-kinds-key"


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[str, DocumentStore]]:
    store = DocumentStore(tmp_path / "documents")
    application = web.Application()
    application.add_routes(DocumentServer(store=store, key=KEY).routes())
    runner = web.AppRunner(application)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}", store
    await runner.cleanup()


@pytest.mark.parametrize(
    ("file", "kind"), [("stock.csv", "text/csv; charset=utf-8"), ("guide.html.txt", "text/plain; charset=utf-8")]
)
async def test_a_kept_table_or_page_text_opens_as_text(served: tuple[str, DocumentStore], file: str, kind: str) -> None:
    base, store = served
    assert await store.keep_data("docs", file, b"Item;Stock\nToner;3\n")
    link = base + signed_path(KEY, "docs", file, expires=int(time.time()) + 60)

    async with aiohttp.ClientSession() as http, http.get(link) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == kind
        assert await response.read() == b"Item;Stock\nToner;3\n"
