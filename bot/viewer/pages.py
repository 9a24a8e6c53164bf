"""A PDF page drawn as a PNG, and its text layer with each character's place. Blocking: run in a thread.

PDFium (pypdfium2) is not thread-safe, so every call holds the process's one PDFium lock (`bot.pdfium_lock`). A page is drawn at most
`LONG_SIDE` pixels on its longer side whatever size it claims, so a page of 200 by 200 inches costs what a letter page
costs. Character places are given in percent of the page as it is drawn (rotation and crop box applied by PDFium's
own page-to-device mapping), top-left origin, so the view can lay `<mark>` elements over the image at any width.
"""

from __future__ import annotations

import ctypes
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from bot.pdfium_lock import PDFIUM

LONG_SIDE = 1600  # pixels: sharp on a laptop, light on a phone
# PDFium decodes a picture whole before scaling it down: a few kilobytes of compressed stream may claim 50,000 x 50,000
# pixels (10 GB decoded). A page whose pictures claim more than this in all is not drawn.
MAX_PICTURE_PIXELS = 80_000_000
_GRID = 10_000  # the virtual device characters are measured on: percent to two decimals
_LOCK = PDFIUM  # shared with ingest's text reading: PDFium takes one call at a time in a process


class PageUnreadable(Exception):
    """The kept PDF cannot be opened or the page drawn (damaged, locked, not a PDF)."""


class PageTooLarge(PageUnreadable):
    """The page's pictures claim more pixels than a view may decode."""


@dataclass(frozen=True)
class CharBox:
    """One character's box in percent of the page: left, top, right, bottom (0-100)."""

    left: float
    top: float
    right: float
    bottom: float


@dataclass(frozen=True)
class TextLayer:
    """A page's text, one character per PDFium character, and each character's box (None: no visible box)."""

    pages: int
    text: str
    boxes: tuple[CharBox | None, ...]


def page_count(path: Path) -> int:
    """How many pages the PDF at `path` has."""
    with _LOCK, _opened(path) as pdf:
        return len(pdf)


Span = Callable[[str], "tuple[int, int] | None"]  # which characters (first, last) of a page's text to measure


def text_layer(path: Path, number: int, *, span: Span | None = None) -> TextLayer:
    """Page `number` (1-based, within the document)'s characters and their boxes: every character's, or with `span`
    only those of the characters it picks from the page's text (a view measures its passage alone: 10x less work)."""
    with _LOCK, _opened(path) as pdf:
        page = pdf[number - 1]
        try:
            textpage = page.get_textpage()
            try:
                return _layer(len(pdf), page, textpage, span)
            finally:
                textpage.close()
        finally:
            page.close()


def draw(path: Path, number: int, *, long_side: int = LONG_SIDE) -> bytes:
    """Page `number` as a PNG, `long_side` pixels on its longer side."""
    with _LOCK, _opened(path) as pdf:
        page = pdf[number - 1]
        try:
            claimed = _picture_pixels(page)
            if claimed > MAX_PICTURE_PIXELS:
                raise PageTooLarge(f"its pictures claim {claimed} pixels")
            width, height = page.get_size()
            scale = long_side / max(width, height, 1.0)
            bitmap = page.render(scale=scale, may_draw_forms=True)
            image = bitmap.to_pil()
        except pdfium.PdfiumError as exc:
            raise PageUnreadable(str(exc)) from exc
        finally:
            page.close()
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def _picture_pixels(page: pdfium.PdfPage) -> int:
    """How many pixels the page's pictures (inside forms too) claim, read from their headers, nothing decoded."""
    total = 0
    for picture in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=8):
        width, height = picture.get_px_size()
        total += max(0, width) * max(0, height)
    return total


class _opened:
    """The PDF at `path`, closed on leaving; PageUnreadable when PDFium refuses it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pdf: pdfium.PdfDocument | None = None

    def __enter__(self) -> pdfium.PdfDocument:
        try:
            self.pdf = pdfium.PdfDocument(self.path)
        except (pdfium.PdfiumError, OSError) as exc:
            raise PageUnreadable(str(exc)) from exc
        return self.pdf

    def __exit__(self, *exc: object) -> None:
        if self.pdf is not None:
            self.pdf.close()


def _layer(pages: int, page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, span: Span | None) -> TextLayer:
    width, height = page.get_size()
    device = (_GRID, max(1, round(_GRID * height / max(width, 1.0))))
    codes = (pdfium_c.FPDFText_GetUnicode(textpage.raw, index) for index in range(textpage.count_chars()))
    text = "".join(chr(code) if 0 < code < 0x110000 else "\ufffd" for code in codes)
    first, last = (0, len(text) - 1) if span is None else (span(text) or (0, -1))
    boxes = tuple(
        _box(page, textpage, index, device) if first <= index <= last and not char.isspace() else None
        for index, char in enumerate(text)
    )
    return TextLayer(pages=pages, text=text, boxes=boxes)


def _box(page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, index: int, device: tuple[int, int]) -> CharBox | None:
    left, bottom, right, top = textpage.get_charbox(index)
    if right <= left or top <= bottom:
        return None  # a generated character (a space PDFium inserted, a line end): nothing drawn there
    x1, y1 = _to_device(page, left, top, device)
    x2, y2 = _to_device(page, right, bottom, device)
    percent_x, percent_y = 100 / device[0], 100 / device[1]
    return CharBox(
        left=min(x1, x2) * percent_x,
        top=min(y1, y2) * percent_y,
        right=max(x1, x2) * percent_x,
        bottom=max(y1, y2) * percent_y,
    )


def _to_device(page: pdfium.PdfPage, x: float, y: float, device: tuple[int, int]) -> tuple[int, int]:
    """PDF points (bottom-left origin, before rotation) -> the drawn page's pixels on a `device`-sized grid."""
    out_x, out_y = ctypes.c_int(), ctypes.c_int()
    pdfium_c.FPDF_PageToDevice(page.raw, 0, 0, device[0], device[1], 0, x, y, out_x, out_y)
    return out_x.value, out_y.value
