"""Running page headers and footers: lines that repeat at the top or bottom of most pages. Pure functions.

"Larkspur Analytics Ltd - Customer Refund Policy 2026 - page 2 of 3" on every page says nothing a passage needs,
yet it fills quotes and adds the same words to every chunk. A line is running when it stands among the first or
last EDGE_LINES lines of at least RUNNING_SHARE of a document's pages (and of two pages at least), compared with
digits masked, so page numbers do not make it differ. Running lines are taken out of every page, the first included.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from bot.ingest.readers import Page

EDGE_LINES = 2
RUNNING_SHARE = 0.6
_DIGITS = re.compile(r"\d+")


def _key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()).lower())


def _edges(text: str) -> set[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    return {_key(line) for line in lines[:EDGE_LINES] + lines[-EDGE_LINES:]}


def running_lines(pages: tuple[Page, ...]) -> frozenset[str]:
    """The (digit-masked) lines that run along the edges of most pages; empty for a one-page document."""
    numbered = [page for page in pages if page.number is not None]
    if len(numbered) < 2:
        return frozenset()
    counts = Counter(key for page in numbered for key in _edges(page.text))
    needed = max(2, RUNNING_SHARE * len(numbered))
    return frozenset(key for key, seen in counts.items() if seen >= needed and len(key) > 3)


def strip_running_lines(pages: tuple[Page, ...]) -> tuple[Page, ...]:
    """`pages` without their running headers and footers (only where they stand at a page's edge)."""
    running = running_lines(pages)
    if not running:
        return pages
    return tuple(replace(page, text=_strip(page.text, running)) for page in pages)


def _strip(text: str, running: frozenset[str]) -> str:
    lines = text.splitlines()
    content = [i for i, line in enumerate(lines) if line.strip()]
    edges = set(content[:EDGE_LINES] + content[-EDGE_LINES:])
    return "\n".join(line for i, line in enumerate(lines) if i not in edges or _key(line) not in running)
