"""How each tool's result reads: a typed value (structured content, for programs) and the same as text (for the
model that called it). Pure functions."""

from __future__ import annotations

from pydantic import BaseModel

from bot.mcp.tools import PageText, SearchResult
from bot.models import Answer


class Source(BaseModel):
    """One citation of an answer: its label [n] in the text, the document page, and the link that opens it."""

    label: int
    file: str
    title: str
    page: int | None
    container: str
    link: str | None


class AskResult(BaseModel):
    """ask's result: the answer with [n] labels, each label's source, and whether the documents answered it."""

    answer: str
    answerable: bool
    mode: str  # model, or search_only (no model configured: the best passages quoted)
    citations: list[Source]
    notices: list[str]


def ask_result(answer: Answer) -> AskResult:
    """The answer as ask's structured result."""
    citations = [
        Source(label=c.label, file=c.file, title=c.title, page=c.page, container=c.container, link=c.url)
        for c in answer.citations
    ]
    return AskResult(
        answer=answer.text,
        answerable=answer.answerable,
        mode=answer.mode,
        citations=citations,
        notices=list(answer.notices),
    )


def ask_text(answer: Answer) -> str:
    """The answer, then one line per citation: `[1] title, page 3 (container): link`."""
    lines = [*answer.notices, answer.text]
    if answer.citations:
        lines.append("\nSources:")
        lines += [f"[{c.label}] {_where(c.title, c.page, c.container)}{_link(c.url)}" for c in answer.citations]
    return "\n".join(lines)


def search_text(found: SearchResult) -> str:
    """Each passage under a line saying where it is; or that nothing matched, and where it was searched."""
    searched = ", ".join(found.containers) + (f" ({', '.join(found.tags)})" if found.tags else "")
    if not found.passages:
        return f"No passage matched in {searched}. Try other words."
    blocks = [f"{len(found.passages)} passages from {searched}, best first:"]
    for n, passage in enumerate(found.passages, 1):
        where = _where(passage.title, passage.page, passage.container)
        blocks.append(f"\n[{n}] {where}{_link(passage.link)}\n{passage.text}")
    return "\n".join(blocks)


def page_text(found: PageText) -> str:
    """The page's text under a line saying which page of which document it is."""
    head = f"{found.file}, page {found.page} of {found.pages} ({found.container}){_link(found.link)}"
    tail = "\n[the page is longer: its text was cut here]" if found.truncated else ""
    return f"{head}\n\n{found.text}{tail}"


def _where(title: str, page: int | None, container: str) -> str:
    return f"{title}{f', page {page}' if page is not None else ''} ({container})"


def _link(url: str | None) -> str:
    return f": {url}" if url else ""
