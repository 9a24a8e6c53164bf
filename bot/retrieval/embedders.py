"""Text embeddings for hybrid search: the Embedder protocol and the OpenAI / Azure OpenAI implementation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from bot.errors import SearchUnavailable

if TYPE_CHECKING:  # the SDK loads with the embedder, not with every user of `normalise` (keyword search)
    from openai import AsyncOpenAI


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of one fixed size."""

    dimensions: int

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A float32 array of shape (len(texts), dimensions), each row of unit length."""
        ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32, so a dot product is the cosine."""
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return array / norms


class OpenAIEmbedder:
    """Embeddings through an AsyncOpenAI client (OpenAI, or Azure OpenAI's v1 endpoint with a deployment name)."""

    def __init__(self, client: AsyncOpenAI, *, model: str, dimensions: int, batch_size: int = 64) -> None:
        self.client = client
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed in batches; a service failure becomes SearchUnavailable."""
        import openai

        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [text or " " for text in texts[start : start + self.batch_size]]
            try:
                response = await self.client.embeddings.create(
                    model=self.model, input=batch, dimensions=self.dimensions
                )
            except openai.OpenAIError as exc:
                raise SearchUnavailable(
                    f"The embedding model {self.model!r} did not answer ({type(exc).__name__}). "
                    "Check FOLIO_EMBEDDING_MODEL and the model credentials, or unset FOLIO_EMBEDDING_MODEL "
                    "for keyword-only search."
                ) from exc
            rows.extend(item.embedding for item in sorted(response.data, key=lambda item: item.index))
        if not rows:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return normalise(np.array(rows, dtype=np.float32))
