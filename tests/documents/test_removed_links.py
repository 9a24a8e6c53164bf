"""Issue 9.2: a signed link to a document removed from Folio answers 410 Gone with a page that says so."""

from __future__ import annotations

import time
from pathlib import Path

import aiohttp

from bot import messages
from bot.cli.document_links import DocumentServer, serve_documents
from bot.documents import DocumentStore, signed_path
from bot.ingest import IndexOptions, index_files
from bot.ingest.lifecycle import remove_files
from bot.retrieval.local import LocalRetriever
from bot.slack.site import Bind

KEY = b"k" * 32


async def fetch(url: str) -> tuple[int, bytes]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.read()


async def test_a_removed_document_answers_410_and_one_indexed_again_opens_again(tmp_path: Path) -> None:
    source = tmp_path / "memo.md"
    source.write_text("The office closes at six on Fridays.", encoding="utf-8")
    store = DocumentStore(tmp_path / "data" / "documents")
    index = LocalRetriever(tmp_path / "data" / "index.sqlite")
    await index_files([source], index, IndexOptions(container="hr", documents=store))
    ports: list[int] = []
    async with serve_documents(
        DocumentServer(store=store, key=KEY), Bind(host="127.0.0.1", port=0), started=ports.append
    ):
        base = f"http://127.0.0.1:{ports[0]}"
        link = base + signed_path(KEY, "hr", "memo.md", expires=int(time.time()) + 60)
        never = base + signed_path(KEY, "hr", "never.md", expires=int(time.time()) + 60)
        opened = await fetch(link)

        await remove_files(index, store, await index.files("hr"))
        status, body = await fetch(link)
        assert status == 410
        assert body.decode().startswith("memo.md was removed from Folio on 20")
        assert body.decode().endswith(messages.document_removed("memo.md", "")[-60:] + "\n")
        assert (await fetch(never))[0] == 404  # a file Folio never held is not "removed"

        await index_files([source], index, IndexOptions(container="hr", documents=store))
        reopened = await fetch(link)
    assert await index.count("hr") == 1
    await index.close()
    assert opened == reopened == (200, source.read_bytes())
