"""The one HTML page a citation opens: a heading, the cited passage as text, then the page image with highlights, the
table with its cited rows, or the kept text with its passage marked. Pure functions; every value is escaped.

No script and nothing from elsewhere: the stylesheet is inline and allowed by its hash (`CONTENT_SECURITY_POLICY`),
images come from Folio itself. Highlights over a page image are `<mark>` elements placed in percent of the page, so
they stay on their words at any width; they are hidden from screen readers, which read the passage as text instead.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from bot import messages
from bot.viewer.marks import Mark
from bot.viewer.sheets import Row, Table
from bot.viewer.text import Excerpt

HIGHLIGHT = (255, 221, 0)  # the marker colour; multiplied over the page, so white paper turns yellow, ink stays dark
STYLE = (
    "*{box-sizing:border-box}"
    "body{margin:0;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d1c1d;background:#f4f4f4}"
    "header,main{max-width:980px;margin:0 auto;padding:12px}"
    "h1{font-size:1.25rem;margin:0 0 4px;overflow-wrap:anywhere}h2{font-size:1rem;margin:0 0 6px}"
    ".meta{margin:0 0 8px;color:#555}"
    "nav{display:flex;flex-wrap:wrap;gap:8px}"
    "nav a{display:inline-block;padding:8px 12px;border:1px solid #888;border-radius:6px;background:#fff;"
    "color:#0b4f9c;text-decoration:none}"
    "a:focus-visible{outline:3px solid #0b4f9c;outline-offset:2px}"
    ".skip{position:absolute;left:-9999px}.skip:focus{left:8px;top:8px;background:#fff;padding:8px;z-index:2}"
    "#passage{background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px;margin-bottom:12px}"
    "blockquote{margin:0;padding-left:12px;border-left:4px solid #0b4f9c;white-space:pre-wrap;"
    "overflow-wrap:anywhere}"
    ".status{margin:0 0 8px;padding:8px;background:#fff4e5;border:1px solid #d98e04;border-radius:6px}"
    ".page{position:relative;margin:0;background:#fff;box-shadow:0 1px 4px rgba(0,0,0,.25)}"
    ".page img{display:block;width:100%;height:auto}"
    ".page mark{position:absolute;background:rgb(255,221,0);mix-blend-mode:multiply;opacity:1}"
    ".scroll{overflow-x:auto;background:#fff;border:1px solid #ddd;border-radius:6px}"
    "table{border-collapse:collapse;font-size:.9rem}caption{text-align:left;padding:8px;font-weight:600}"
    "th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;white-space:nowrap}"
    "thead th{background:#e8eef8}tbody th{color:#555;font-weight:400;text-align:right}"
    "tr.cited td,tr.cited th{background:rgb(255,221,0)}"
    "td mark{background:none;color:inherit}"
    ".text{background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px;white-space:pre-wrap;"
    "overflow-wrap:anywhere;font:14px/1.5 ui-monospace,Menlo,Consolas,monospace}"
    ".text mark{background:rgb(255,221,0)}"
    ".sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}"
)
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
# style-src-attr admits the marks' positions (style attributes cannot load anything: img-src is 'self' only).
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; img-src 'self'; style-src 'sha256-{_STYLE_HASH}'; style-src-elem 'sha256-{_STYLE_HASH}'; "
    "style-src-attr 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@dataclass(frozen=True)
class Heading:
    """What stands above every view: the name people know, where and how old, and where to go from here."""

    name: str
    container: str
    age: str
    position: str  # "Page 3 of 12", "sheet Invoices, rows 14-16", or ""
    previous: str | None = None
    next: str | None = None
    original: str | None = None  # the kept file itself ("Open the PDF")
    original_label: str = messages.VIEWER_OPEN_PDF


@dataclass(frozen=True)
class PageImage:
    src: str
    alt: str
    marks: tuple[Mark, ...]


def page_html(heading: Heading, *, passage: str, status: str, image: PageImage) -> str:
    """A page view: the passage as text (and why nothing is highlighted, when nothing is), then the page."""
    marks = "".join(
        f'<mark aria-hidden="true" style="left:{m.left}%;top:{m.top}%;width:{m.width}%;height:{m.height}%"></mark>'
        for m in image.marks
    )
    figure = f'<figure class="page"><img src="{escape(image.src)}" alt="{escape(image.alt)}">{marks}</figure>'
    return _document(heading, _passage(messages.VIEWER_PASSAGE, passage, status) + figure)


def table_html(heading: Heading, *, table: Table, status: str, rows: str) -> str:
    """A table view: the header and the cited rows highlighted among the rows around them."""
    if table.header is None:
        return _document(heading, _passage(messages.VIEWER_ROWS, "", status))
    head = _row(table.header, table.columns, cell="th", scope=' scope="col"')
    body = "".join(_row(row, table.columns) for row in table.rows)
    caption = escape(messages.viewer_rows_caption(table.sheet, rows))
    grid = (  # the caption stands above the scrolling table, so that it wraps on a phone instead of scrolling away
        f'<p class="meta" aria-hidden="true">{caption}</p>'
        f'<div class="scroll" role="region" aria-label="{caption}" tabindex="0"><table><caption class="sr">{caption}'
        f"</caption><thead>{head}</thead><tbody>{body}</tbody></table></div>"
    )
    return _document(heading, (_passage(messages.VIEWER_ROWS, "", status) if status else "") + grid)


def text_html(heading: Heading, *, excerpt: Excerpt, passage: str, status: str) -> str:
    """A text view: the kept text around the passage, the passage marked."""
    cut = escape(messages.VIEWER_CUT)
    marked = f'<mark id="cited">{escape(excerpt.marked)}</mark>' if excerpt.marked else ""
    body = (
        f'<pre class="text" tabindex="0">{cut + chr(10) if excerpt.cut_before else ""}{escape(excerpt.before)}'
        f"{marked}{escape(excerpt.after)}{chr(10) + cut if excerpt.cut_after else ''}</pre>"
    )
    return _document(heading, _passage(messages.VIEWER_PASSAGE, passage, status) + body)


def _row(row: Row, columns: int, *, cell: str = "td", scope: str = "") -> str:
    cells = list(row.cells) + [""] * (columns - len(row.cells))
    label = f'<th scope="row">{row.number}{"<span class=sr> (cited)</span>" if row.cited else ""}</th>'
    if cell == "th":
        label = f'<th scope="col">{row.number}</th>'
    inner = (f"<mark>{escape(value)}</mark>" if row.cited and value else escape(value) for value in cells)
    shown = "".join(f"<{cell}{scope}>{value}</{cell}>" for value in inner)
    return f"<tr{' class=cited' if row.cited else ''}>{label}{shown}</tr>"


def _passage(title: str, passage: str, status: str) -> str:
    note = f'<p class="status" role="status">{escape(status)}</p>' if status else ""
    quote = f"<blockquote>{escape(passage)}</blockquote>" if passage else ""
    return f'<section id="passage" aria-labelledby="passage-title"><h2 id="passage-title">{escape(title)}</h2>{note}{quote}</section>'


def _links(heading: Heading) -> str:
    links: Sequence[tuple[str | None, str, str]] = (
        (heading.previous, "prev", messages.VIEWER_PREVIOUS),
        (heading.next, "next", messages.VIEWER_NEXT),
        (heading.original, "alternate", heading.original_label),
    )
    shown = "".join(f'<a href="{escape(url)}" rel="{rel}">{escape(label)}</a>' for url, rel, label in links if url)
    return f'<nav aria-label="Document">{shown}</nav>' if shown else ""


def _document(heading: Heading, main: str) -> str:
    meta = " · ".join(part for part in (heading.position, heading.container, heading.age) if part)
    title = " · ".join(part for part in (heading.name, heading.position) if part)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f'<a class="skip" href="#passage">{escape(messages.VIEWER_SKIP)}</a>'
        f'<header><h1>{escape(heading.name)}</h1><p class="meta">{escape(meta)}</p>{_links(heading)}</header>'
        f"<main>{main}</main></body></html>"
    )
