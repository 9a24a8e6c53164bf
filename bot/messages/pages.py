"""What a person reads on a page Folio serves: the citation viewer, and a link that cannot open."""

from __future__ import annotations

# --- document links: plain-text pages a browser shows instead of the PDF ---------------------------------------------
LINK_REFUSED = "This document link is not valid or has expired. Ask Folio the question again for a fresh link."
DOCUMENT_GONE = (
    "Folio no longer holds this document (it was removed, or indexed again under another name). "
    "Ask Folio the question again, or ask an admin to index the document again."
)


# --- The citation viewer (bot.viewer): the page a citation link opens ------------------------------------------------
VIEWER_PASSAGE = "Cited passage"
VIEWER_ROWS = "Cited rows"
VIEWER_NOT_LOCATED = (
    "Folio could not find the cited passage on this page with confidence, so nothing is highlighted. "
    "The passage as cited is below: look for it on the page, or open the PDF and search for its words."
)
VIEWER_PARTIAL = "The passage runs on to the next page: its opening words are highlighted here."
VIEWER_NOT_LOCATED_TEXT = (
    "Folio could not find the cited passage in this document with confidence, so nothing is marked. "
    "The passage as cited is below."
)
VIEWER_ROWS_GONE = (
    "Folio no longer holds this spreadsheet's cells (it was indexed before rows were kept, or has no sheet of that "
    "name now): open the file, or ask an admin to index it again."
)
VIEWER_PAGE_UNREADABLE = "Folio cannot draw this page of its copy (the PDF is damaged): open the PDF instead."
VIEWER_PAGE_TOO_LARGE = "This page holds pictures too large for Folio to draw: open the PDF instead."
VIEWER_PREVIOUS = "Previous page"
VIEWER_NEXT = "Next page"
VIEWER_OPEN_PDF = "Open the PDF"
VIEWER_OPEN_FILE = "Open the file"
VIEWER_SKIP = "Skip to the cited passage"
VIEWER_CUT = "…"


def viewer_no_page(page: int, pages: int) -> str:
    return f"This document has no page {page}: it has {pages} page{'s' if pages != 1 else ''}. Open the PDF instead."


def viewer_page_of(page: int, pages: int) -> str:
    return f"Page {page} of {pages}"


def viewer_page_alt(name: str, page: int) -> str:
    return f"Page {page} of {name}, as printed; the cited passage is given as text above."


def viewer_age(day: str, days: int) -> str:
    """`indexed 3 days ago (2026-11-29)`: how old Folio's copy is."""
    when = "today" if days <= 0 else ("yesterday" if days == 1 else f"{days} days ago")
    return f"indexed {when} ({day})"


def viewer_rows_caption(sheet: str, rows: str) -> str:
    return f"Sheet {sheet}: {rows}, highlighted, with the header and the rows around them"


__all__ = [
    "DOCUMENT_GONE",
    "LINK_REFUSED",
    "VIEWER_CUT",
    "VIEWER_NEXT",
    "VIEWER_NOT_LOCATED",
    "VIEWER_NOT_LOCATED_TEXT",
    "VIEWER_OPEN_FILE",
    "VIEWER_OPEN_PDF",
    "VIEWER_PAGE_TOO_LARGE",
    "VIEWER_PAGE_UNREADABLE",
    "VIEWER_PARTIAL",
    "VIEWER_PASSAGE",
    "VIEWER_PREVIOUS",
    "VIEWER_ROWS",
    "VIEWER_ROWS_GONE",
    "VIEWER_SKIP",
    "viewer_age",
    "viewer_no_page",
    "viewer_page_alt",
    "viewer_page_of",
    "viewer_rows_caption",
]
