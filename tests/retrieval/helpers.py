"""Test doubles and builders shared by the retrieval tests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from bot.models import Chunk, Tag
from bot.retrieval import IndexWriter
from tests.fakes.azure_search import fake_embedding

API_KEY = "test-admin-key"
DIMENSIONS = 32


class HashEmbedder:
    """An Embedder without a model: the same hashed bag of words the fake's vectorizer uses."""

    dimensions = DIMENSIONS

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([fake_embedding(text, self.dimensions) for text in texts], dtype=np.float32).reshape(
            len(texts), self.dimensions
        )


def chunk(container: str, file: str, text: str, *, page: int | None = 1, tags: tuple[str, ...] = ()) -> Chunk:
    """A chunk as ingestion would make it (id unique per container, file, page and text)."""
    return Chunk(
        id=hashlib.sha1(f"{container}|{file}|{page}|{text}".encode()).hexdigest()[:24],
        file=file,
        page=page,
        container=container,
        tags=tuple(Tag.parse(tag) for tag in tags),
        text=text,
        context=file,
    )


async def fingerprints(index: IndexWriter, container: str) -> dict[str, str]:
    """File name -> fingerprint of every file `index` holds in `container`."""
    return {held.file: held.fingerprint for held in await index.files(container)}
