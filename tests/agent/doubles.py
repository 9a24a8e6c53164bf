"""Test doubles and small builders for the agent tests (the retriever double implements the real protocol)."""

from __future__ import annotations

from bot.errors import SearchUnavailable
from bot.models import Chunk, Scope
from bot.retrieval import Retriever

SCOPE = Scope(container="hr")


class ScriptedRetriever(Retriever):
    """A test double of the Retriever protocol: canned chunks per query (or `default`), every query recorded."""

    def __init__(self, results: dict[str, list[Chunk]] | None = None, *, default: list[Chunk] | None = None) -> None:
        self.results = results or {}
        self.default = default or []
        self.queries: list[str] = []
        self.scopes: list[Scope] = []
        self.down = False

    async def search(self, query: str, scope: Scope, *, top: int) -> list[Chunk]:
        self.queries.append(query)
        self.scopes.append(scope)
        if self.down:
            raise SearchUnavailable("Search is down.")
        return self.results.get(query, self.default)[:top]


def chunk(
    number: int,
    *,
    file: str = "handbook.pdf",
    page: int | None = None,
    date: str | None = None,
    text: str | None = None,
    tabular: bool = False,
) -> Chunk:
    """A chunk with a recognisable id and text: c<number> on page <number> unless given."""
    return Chunk(
        id=f"c{number}",
        file=file,
        page=number if page is None and not tabular else page,
        container=SCOPE.containers[0],
        doc_date=date,
        text=text or f"Passage {number} says fact number {number}.",
        tabular=tabular,
    )


def link(c: Chunk) -> str:
    return f"https://docs.example/{c.file}" + ("" if c.page is None else f"#page={c.page}")
