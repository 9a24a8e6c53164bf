"""GET /view/...: the page a citation link opens, and the page images it shows. Each request is checked before any
file is opened: a malformed or tampered link is 403, an expired one 403, a removed document 410 (`bot.viewer.links`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from functools import partial
from pathlib import Path, PurePath

from aiohttp import web

from bot import messages
from bot.citation_marks import display_name
from bot.documents import DocumentStore, signed_path, valid_name
from bot.viewer.cache import PageCache
from bot.viewer.html import CONTENT_SECURITY_POLICY, Heading, PageImage, page_html, table_html, text_html
from bot.viewer.links import (
    VIEW_PREFIX,
    Cited,
    image_path,
    image_signature,
    matches,
    parse_cited,
    view_path,
    view_signature,
)
from bot.viewer.marks import line_marks
from bot.viewer.pages import PageTooLarge, PageUnreadable, page_count, text_layer
from bot.viewer.passage import Anchors, Located, locate
from bot.viewer.sheets import Table, TableUnreadable, read_table
from bot.viewer.text import TextUnreadable, excerpt, kept_text

log = logging.getLogger(__name__)

VIEW_ROUTE = VIEW_PREFIX + "/{container}/{file}"
IMAGE_ROUTE = VIEW_PREFIX + "/{container}/{file}/page-{page:[0-9]{1,6}}.png"
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "private, no-store",  # a view names its passage: not kept in shared caches
}


Signer = Callable[[str, str, int, Cited], str]  # the signature a link to (container, file, expiry, shown) must carry


@dataclass(frozen=True)
class Request:
    """One checked view request: the document, its kept copy, the link's expiry and what it shows."""

    container: str
    file: str
    copy: Path
    expires: int
    cited: Cited


@dataclass(frozen=True)
class Viewer:
    """The viewer's routes over Folio's copies, with the key their links are signed with."""

    store: DocumentStore
    key: bytes = field(repr=False)  # never in logs
    pages: PageCache

    def routes(self) -> list[web.RouteDef]:
        """GET /view/{container}/{file} (the view) and /view/{container}/{file}/page-N.png (its image)."""
        return [web.get(VIEW_ROUTE, self.view), web.get(IMAGE_ROUTE, self.image)]

    async def view(self, request: web.Request) -> web.Response:
        """The view of a valid link: a page, a table or a text, as the kept copy's kind says."""
        checked = self._check(request, signed=lambda c, f, e, cited: view_signature(self.key, c, f, e, cited))
        if isinstance(checked, web.Response):
            return checked
        if checked.cited.sheet is not None and checked.cited.rows is not None:
            body = await self._table(checked)
        elif checked.copy.suffix.lower() == ".pdf":
            body = await self._page(checked)
        else:
            body = await self._text(checked)
        if isinstance(body, web.Response):
            return body
        return web.Response(text=body, content_type="text/html", charset="utf-8", headers=_HEADERS)

    async def image(self, request: web.Request) -> web.Response:
        """A page image of a valid link, drawn or from the cache."""
        page = int(request.match_info["page"])
        checked = self._check(request, signed=lambda c, f, e, _: image_signature(self.key, c, f, e, page))
        if isinstance(checked, web.Response):
            return checked
        try:
            pages = await asyncio.to_thread(page_count, checked.copy)
            if not 1 <= page <= pages:
                return _text(404, messages.viewer_no_page(page, pages))
            image = await self.pages.image(checked.container, checked.file, checked.copy, page)
        except PageTooLarge as exc:
            log.warning("viewer will not draw %s/%s page %d: %s", checked.container, checked.file, page, exc)
            return _text(413, messages.VIEWER_PAGE_TOO_LARGE)
        except PageUnreadable as exc:
            log.warning("viewer cannot draw %s/%s page %d: %s", checked.container, checked.file, page, exc)
            return _text(500, messages.VIEWER_PAGE_UNREADABLE)
        headers = {**_HEADERS, "Cache-Control": "private, max-age=3600"}
        return web.Response(body=image, content_type="image/png", headers=headers)

    def _check(self, request: web.Request, *, signed: Signer) -> Request | web.Response:
        """The request's document and what it shows, or the refusal: 403 before any file is looked at, then 410/404."""
        container, file = request.match_info["container"], request.match_info["file"]
        expires, given = request.query.get("expires", ""), request.query.get("signature", "")
        cited = parse_cited(request.query)
        reason = ""
        if not (valid_name(container) and valid_name(file)) or cited is None:
            reason = "bad name or field"
        elif len(request.query) != len(set(request.query)):
            reason = "a field given twice"  # which one a proxy or a reader takes is anyone's guess: neither
        elif not expires.isdecimal() or not expires.isascii() or len(expires) > 12 or expires.startswith("0"):
            reason = "bad expiry"
        elif not matches(signed(container, file, int(expires), cited), given):
            reason = "bad signature"
        elif int(expires) < time.time():
            reason = "expired"
        if reason:
            log.info("viewer link refused (%s): %s", reason, request.path)
            return _text(403, messages.LINK_REFUSED)
        copy = self.store.stored(container, file)
        if copy is None:
            removed = self.store.removed(container, file)
            if removed is not None:
                return _text(410, messages.document_removed(file, removed))
            return _text(404, messages.DOCUMENT_GONE)
        assert cited is not None  # refused above (403) when the link names no passage place
        return Request(container=container, file=file, copy=copy, expires=int(expires), cited=cited)

    def _heading(self, checked: Request, *, position: str, page: int | None = None, pages: int = 0) -> Heading:
        def at(number: int) -> str | None:
            if not 1 <= number <= pages:
                return None
            return view_path(
                self.key, checked.container, checked.file, expires=checked.expires, cited=checked.cited.at_page(number)
            )

        original = signed_path(self.key, checked.container, checked.file, expires=checked.expires, page=page)
        is_pdf = checked.copy.suffix.lower() == ".pdf"
        return Heading(
            name=display_name(checked.file),
            container=checked.container,
            age=_age(checked.copy),
            position=position,
            previous=at(page - 1) if page else None,
            next=at(page + 1) if page else None,
            original=original,
            original_label=messages.VIEWER_OPEN_PDF if is_pdf else messages.VIEWER_OPEN_FILE,
        )

    async def _page(self, checked: Request) -> str | web.Response:
        page = checked.cited.page or 1
        try:
            pages = await asyncio.to_thread(page_count, checked.copy)
            if page > pages:
                return _text(404, messages.viewer_no_page(page, pages))
            anchors = checked.cited.anchors
            found: list[Located] = []  # where `span` found the passage, measured in the same pass
            span = partial(_span_of, anchors, found) if anchors else None
            layer = await asyncio.to_thread(text_layer, checked.copy, page, span=span)
        except PageUnreadable as exc:
            log.warning("viewer cannot read %s/%s: %s", checked.container, checked.file, exc)
            return _text(500, messages.VIEWER_PAGE_UNREADABLE)
        located = found[0] if found else None
        marks = line_marks(layer.boxes, located.first, located.last) if located else ()
        passage, status = _passage_and_status(anchors, layer.text, located, not_found=messages.VIEWER_NOT_LOCATED)
        if located and located.partial:
            status = messages.VIEWER_PARTIAL
        heading = self._heading(checked, position=messages.viewer_page_of(page, pages), page=page, pages=pages)
        src = image_path(self.key, checked.container, checked.file, expires=checked.expires, page=page)
        image = PageImage(src=src, alt=messages.viewer_page_alt(heading.name, page), marks=marks)
        return page_html(heading, passage=passage, status=status, image=image)

    async def _table(self, checked: Request) -> str | web.Response:
        sheet, rows = checked.cited.sheet or "", checked.cited.rows or (1, 1)
        is_csv = PurePath(checked.file).suffix.lower() in (".csv", ".tsv")
        source = checked.copy if is_csv else self.store.workbook(checked.container, checked.file)
        label = f"rows {rows[0]}-{rows[1]}" if rows[0] != rows[1] else f"row {rows[0]}"
        heading = self._heading(checked, position=f"sheet {sheet}, {label}")
        try:
            if source is None:
                raise TableUnreadable("no workbook kept")
            table = await asyncio.to_thread(read_table, source, sheet=sheet, rows=rows, csv_file=is_csv)
        except (TableUnreadable, TextUnreadable) as exc:
            log.info("viewer has no rows of %s/%s: %s", checked.container, checked.file, exc)
            return table_html(heading, table=_empty(sheet), status=messages.VIEWER_ROWS_GONE, rows=label)
        return table_html(heading, table=table, status="", rows=label)

    async def _text(self, checked: Request) -> str | web.Response:
        try:
            text = await asyncio.to_thread(kept_text, checked.copy)
        except TextUnreadable as exc:
            log.warning("viewer cannot read %s/%s: %s", checked.container, checked.file, exc)
            return _text(404, messages.DOCUMENT_GONE)
        anchors = checked.cited.anchors
        located = locate(anchors, text) if anchors else None
        passage, status = _passage_and_status(anchors, text, located, not_found=messages.VIEWER_NOT_LOCATED_TEXT)
        span = (located.first, located.last) if located else None
        heading = self._heading(checked, position="")
        return text_html(heading, excerpt=excerpt(text, span), passage=passage, status=status)


def _span_of(anchors: Anchors, found: list[Located], text: str) -> tuple[int, int] | None:
    """Where the passage stands in a page's text (noted in `found`), for `text_layer` to measure that part alone."""
    located = locate(anchors, text)
    if located is None:
        return None
    found.append(located)
    return located.first, located.last


def _passage_and_status(
    anchors: Anchors | None, text: str, located: Located | None, *, not_found: str
) -> tuple[str, str]:
    """The passage as text (the page's own words when located, the link's anchors when not), and what to say."""
    if anchors is None:
        return "", ""
    if located is not None:
        return text[located.first : located.last + 1], ""
    cited = f"{anchors.head} {messages.VIEWER_CUT} {anchors.tail}" if anchors.tail else anchors.head
    return cited, not_found


def _empty(sheet: str) -> Table:
    return Table(sheet=sheet, header=None, rows=(), columns=0)


def _age(copy: Path) -> str:
    indexed = datetime.fromtimestamp(copy.stat().st_mtime, tz=timezone.utc).date()
    return messages.viewer_age(indexed.isoformat(), (date.today() - indexed).days)


def _text(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text + "\n", headers={"X-Content-Type-Options": "nosniff"})
