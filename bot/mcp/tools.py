"""The three tools an agent gets, as plain functions of (Folio, person, arguments) -> a typed result.

    search_documents(query, tags?)  passages of the documents the person may read, each with file, page, container
                                    and a link that opens the page
    read_page(document, page)       the text of one page of a document the person may read
    ask(question)                   the one turn (bot.mcp.turn): an answer with checked citations and links

Every call resolves the person's scope afresh (bot.mcp.scope), counts against the person's rate cap, and refuses
before it reads anything when the person may not. A failure a person can act on is a FolioError whose sentence the
agent is shown (bot.mcp.server makes it the tool's error result).
"""

from __future__ import annotations

import asyncio
from pathlib import PurePosixPath

from pydantic import BaseModel

from bot import messages
from bot.citation_marks import display_name
from bot.errors import InvalidInput
from bot.ingest.pdf_text import read_pdf
from bot.mcp.identity import Person
from bot.mcp.scope import mcp_request, scope_for
from bot.mcp.services import McpFolio
from bot.models import Chunk, Scope, Tag
from bot.retrieval import MAX_QUERY_CHARS, clean_query

MAX_TAGS = 8
MAX_PAGE_CHARS = 20_000  # one page's text as an agent gets it; a page longer than this is cut (and says so)


class Passage(BaseModel):
    """One passage found, and where it is."""

    file: str
    title: str
    page: int | None
    container: str
    link: str | None
    text: str


class SearchResult(BaseModel):
    """search_documents' result: the passages, best first, and what was searched."""

    passages: list[Passage]
    containers: list[str]
    tags: list[str]


class PageText(BaseModel):
    """read_page's result."""

    file: str
    container: str
    page: int
    pages: int
    link: str | None
    text: str
    truncated: bool = False


def parse_tags(tags: list[str] | None) -> tuple[Tag, ...]:
    """The agent's `key:value` filters as Tags; InvalidInput naming the form for a malformed one."""
    if not tags:
        return ()
    if len(tags) > MAX_TAGS:
        raise InvalidInput(messages.MCP_TOO_MANY_TAGS.format(limit=MAX_TAGS))
    try:
        return tuple(Tag.parse(tag) for tag in tags)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc


def checked_query(query: str) -> str:
    """The query stripped; InvalidInput when blank or longer than a search takes (never silently cut)."""
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(messages.MCP_QUERY_TOO_LONG.format(limit=MAX_QUERY_CHARS))
    return clean_query(query)


async def search_documents(mcp: McpFolio, person: Person, *, query: str, tags: list[str] | None) -> SearchResult:
    """The passages of the person's documents that best match `query`, narrowed by `tags`."""
    text, filters = checked_query(query), parse_tags(tags)
    request = await mcp_request(mcp, person, question=text, tags=filters)
    scope = await scope_for(mcp, request)  # refusals first: an outsider is not even counted
    await mcp.budget.check(request)
    chunks = await mcp.folio.retriever.search(text, scope, top=mcp.settings.folio_search_top)
    passages = [_passage(mcp, chunk) for chunk in chunks if chunk.in_scope(scope)]
    return SearchResult(passages=passages, containers=list(scope.containers), tags=[str(tag) for tag in scope.tags])


def _passage(mcp: McpFolio, chunk: Chunk) -> Passage:
    return Passage(
        file=chunk.file,
        title=display_name(chunk.file),
        page=chunk.cited_page,
        container=chunk.container,
        link=mcp.folio.links.link_for(chunk),
        text=chunk.text,
    )


async def read_page(mcp: McpFolio, person: Person, *, document: str, page: int) -> PageText:
    """The text of page `page` of `document`, when it is a document the person may read."""
    request = await mcp_request(mcp, person, question=f"read {document} page {page}")
    scope = await scope_for(mcp, request)
    await mcp.budget.check(request)
    container = await _container_of(mcp, scope, document)
    documents = mcp.folio.documents
    path = documents.stored(container, document) if documents is not None else None
    if path is None:
        raise InvalidInput(messages.MCP_NO_COPY.format(name=document))
    if path.suffix.lower() != ".pdf":
        raise InvalidInput(messages.MCP_NO_PAGES.format(name=document))
    pdf = await asyncio.to_thread(read_pdf, path, mcp.settings.folio_max_file_chars)
    if not 1 <= page <= len(pdf.pages):
        raise InvalidInput(messages.MCP_NO_SUCH_PAGE.format(name=document, pages=len(pdf.pages)))
    text = pdf.pages[page - 1]
    chunk = Chunk(id="-", file=document, page=page, container=container, text="")
    return PageText(
        file=document,
        container=container,
        page=page,
        pages=len(pdf.pages),
        link=mcp.folio.links.link_for(chunk),
        text=text[:MAX_PAGE_CHARS],
        truncated=len(text) > MAX_PAGE_CHARS,
    )


async def _container_of(mcp: McpFolio, scope: Scope, document: str) -> str:
    """The container of the person's scope that holds `document` with tags the scope allows; InvalidInput (the same
    sentence whether it does not exist or is not theirs) otherwise. Names are compared whole: no path, no pattern."""
    if not document or PurePosixPath(document).name != document or document in {".", ".."}:
        raise InvalidInput(messages.MCP_NO_SUCH_DOCUMENT.format(name=document[:200]))
    for container in scope.containers:
        for indexed in await mcp.folio.retriever.files(container):
            if indexed.file == document and scope.allows(container, indexed.tags):
                return container
    raise InvalidInput(messages.MCP_NO_SUCH_DOCUMENT.format(name=document[:200]))
