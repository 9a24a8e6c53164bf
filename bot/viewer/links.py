"""The signed viewer link: which document, which page, and which passage or rows to highlight. Pure functions.

    /view/<container>/<file>?expires=<unix>&page=4&at=<opening words>&to=<closing words>&n=<letters>&signature=<hex>
    /view/<container>/<file>?expires=<unix>&sheet=Invoices&rows=14-16&signature=<hex>
    /view/<container>/<file>/page-4.png?expires=<unix>&signature=<hex>            the page image the view shows

The passage travels as its opening and closing words and its length (`bot.viewer.passage.Anchors`), so a link stays
short enough for a Slack message holding ten of them. Everything the view shows is signed with HMAC-SHA256: a link
cannot be edited into highlighting other words, another page or other rows, nor into another document. The message
starts with what is signed ("view", "image"), so no document link's signature passes for a view's and the reverse;
names cannot hold NUL, so no two messages run together.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from bot.models import Chunk
from bot.viewer.passage import Anchors, anchors_of

VIEW_PREFIX = "/view"
MAX_PAGE = 100_000  # no PDF a person reads has more pages; a longer number is refused before any file is opened
MAX_ROW = 10_000_000
_FIELDS = ("page", "at", "to", "n", "sheet", "rows")
_MAX_VALUE = 300  # a field longer than any Folio writes is refused unread


@dataclass(frozen=True, kw_only=True)
class Cited:
    """What a view link shows: a page, a passage's anchors, a sheet's rows (each when it applies)."""

    page: int | None = None
    anchors: Anchors | None = None
    sheet: str | None = None
    rows: tuple[int, int] | None = None

    def fields(self) -> list[tuple[str, str]]:
        """The query fields, in the one order they are signed in."""
        values: dict[str, str | None] = {
            "page": str(self.page) if self.page is not None else None,
            "at": self.anchors.head if self.anchors else None,
            "to": self.anchors.tail if self.anchors and self.anchors.tail else None,
            "n": str(self.anchors.size) if self.anchors else None,
            "sheet": self.sheet,
            "rows": f"{self.rows[0]}-{self.rows[1]}" if self.rows else None,
        }
        return [(name, value) for name in _FIELDS if (value := values[name]) is not None]

    def at_page(self, page: int) -> Cited:
        """The same document at another page, nothing highlighted (previous / next)."""
        return Cited(page=page)


def cited_in(chunk: Chunk) -> Cited:
    """What a citation of `chunk` shows: its sheet and rows for a table, else its page and its passage."""
    place = chunk.table_place
    if place is not None:
        return Cited(sheet=place.sheet, rows=(place.first_row, place.last_row))
    return Cited(page=chunk.cited_page, anchors=anchors_of(chunk.text))


def parse_cited(query: Mapping[str, str]) -> Cited | None:
    """The Cited a request's query names, or None when a field is malformed (too long, NUL, not a number)."""
    values = {name: query.get(name) for name in _FIELDS}
    if any(value is not None and (len(value) > _MAX_VALUE or "\0" in value) for value in values.values()):
        return None
    page = _number(values["page"], MAX_PAGE)
    size = _number(values["n"], 1_000_000)
    rows = _rows(values["rows"])
    if (values["page"] is not None and page is None) or (values["rows"] is not None and rows is None):
        return None
    anchors = None
    if values["at"] is not None:
        if size is None:
            return None
        anchors = Anchors(head=values["at"], tail=values["to"] or "", size=size)
    return Cited(page=page, anchors=anchors, sheet=values["sheet"], rows=rows)


def _number(value: str | None, limit: int) -> int | None:
    if value is None or not value.isdecimal() or not value.isascii() or len(value) > 9 or value.startswith("0"):
        return None  # one spelling per number: what is read is what was signed
    number = int(value)
    return number if 1 <= number <= limit else None


def _rows(value: str | None) -> tuple[int, int] | None:
    first, dash, last = (value or "").partition("-")
    low, high = _number(first, MAX_ROW), _number(last, MAX_ROW)
    return (low, high) if dash and low is not None and high is not None and low <= high else None


def view_signature(key: bytes, container: str, file: str, expires: int, cited: Cited) -> str:
    """The hex HMAC-SHA256 of a view link: the document, the expiry and every field the view shows."""
    fields = "\0".join(f"{name}={value}" for name, value in cited.fields())
    message = f"view\0{container}\0{file}\0{expires}\0{fields}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def image_signature(key: bytes, container: str, file: str, expires: int, page: int) -> str:
    """The hex HMAC-SHA256 of one page image's link."""
    message = f"image\0{container}\0{file}\0{expires}\0{page}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def matches(expected: str, given: str) -> bool:
    """Whether a signature is right, in the same time wherever it differs (no guessing it byte by byte)."""
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


def view_base(container: str, file: str) -> str:
    """`/view/<container>/<file>`, both names percent-encoded (a `/` inside a name stays encoded)."""
    return f"{VIEW_PREFIX}/{quote(container, safe='')}/{quote(file, safe='')}"


def view_path(key: bytes, container: str, file: str, *, expires: int, cited: Cited) -> str:
    """The path and query of a signed view link."""
    signature = view_signature(key, container, file, expires, cited)
    query = urlencode([("expires", str(expires)), *cited.fields(), ("signature", signature)])  # spaces as +: shorter
    return f"{view_base(container, file)}?{query}"


def image_path(key: bytes, container: str, file: str, *, expires: int, page: int) -> str:
    """The path and query of a signed page image."""
    signature = image_signature(key, container, file, expires, page)
    query = urlencode({"expires": expires, "signature": signature})
    return f"{view_base(container, file)}/page-{page}.png?{query}"
