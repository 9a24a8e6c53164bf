"""Issue 35: a real browser (Debian's Chromium, headless) opens the viewer of a cited passage, and the screenshot
shows the highlight over the passage's words, at a phone's width and a desktop's. The pixels are read where the
page's `<mark>` boxes say the passage is: highlighted there, nowhere else on the page image."""

from __future__ import annotations

import asyncio
import io
import shutil
from pathlib import Path

import pytest
from PIL import Image

from bot.app import SAMPLE_CORPUS
from bot.viewer.html import HIGHLIGHT
from tests.viewer.site import Box, image_url, indexed_site, marks

pytestmark = pytest.mark.slow

PDF = "refund_policy_2026.pdf"
MAIN_WIDTH, PADDING = 980, 12  # the page's layout (bot.viewer.html.STYLE): main's max-width and padding
# Tall windows: a screenshot shows the window only, and the whole page image must be in it at both widths.
WINDOWS = {360: 1700, 1280: 2000}


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return found


async def screenshot(browser: str, url: str, width: int, height: int, folder: Path) -> Image.Image:
    """What Chromium shows of `url` in a `width` x `height` window, taken headless with no profile and no network
    other than the URL."""
    out = folder / f"viewer-{width}.png"
    process = await asyncio.create_subprocess_exec(
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={folder / f'profile-{width}'}",
        f"--screenshot={out}",
        f"--window-size={width},{height}",
        url,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await asyncio.wait_for(process.wait(), timeout=90)
    except TimeoutError:
        process.kill()
        raise
    return Image.open(out).convert("RGB")


def is_highlight(pixel: tuple[int, int, int]) -> bool:
    """The marker colour over paper."""
    red, green, blue = pixel
    return blue < 80 and red > 200 and abs(green - HIGHLIGHT[1]) < 40


def is_marked(pixel: tuple[int, int, int]) -> bool:
    """The marker colour, or ink seen through it: multiplied by the marker, grey ink loses its blue; black stays."""
    red, _, blue = pixel
    return blue < 0.5 * red or red < 40


def check(shot: Image.Image, boxes: list[Box], aspect: float) -> None:
    width = shot.width
    left = (width - min(width, MAIN_WIDTH)) / 2 + PADDING
    figure_width = min(width, MAIN_WIDTH) - 2 * PADDING
    figure_height = figure_width * aspect
    pixels = shot.load()
    columns = range(int(left), int(left + figure_width))
    rows = [y for y in range(shot.height) if any(is_highlight(pixels[x, y]) for x in columns[::2])]
    assert rows, "no highlight anywhere on the page image"
    top = rows[0] - boxes[0].top / 100 * figure_height  # where the page image starts in the window

    def rectangle(box: Box, grow: float = 0) -> tuple[int, int, int, int]:
        return (
            int(left + box.left / 100 * figure_width - grow),
            int(top + box.top / 100 * figure_height - grow),
            int(left + box.right / 100 * figure_width + grow),
            int(top + box.bottom / 100 * figure_height + grow),
        )

    for box in boxes:
        x1, y1, x2, y2 = rectangle(box)
        inner = [pixels[x, y] for x in range(x1 + 2, x2 - 1) for y in range(y1 + 2, y2 - 1)]
        marked = sum(is_marked(pixel) for pixel in inner) / len(inner)
        marker = sum(is_highlight(pixel) for pixel in inner) / len(inner)
        assert (marked > 0.95, marker > 0.3) == (True, True), (box, marked, marker)  # the marker, ink through it
    outside = [
        (x, y)
        for y in range(int(top), int(top + figure_height))
        for x in columns
        if is_highlight(pixels[x, y])
        and not any(r[0] <= x <= r[2] and r[1] <= y <= r[3] for r in (rectangle(b, grow=2) for b in boxes))
    ]
    assert outside == []  # nothing highlighted beyond the passage's boxes


async def test_chromium_shows_the_highlight_over_the_passage_at_phone_and_desktop_widths(tmp_path: Path) -> None:
    browser = chromium()
    async with indexed_site([SAMPLE_CORPUS / PDF], tmp_path / "data") as site:
        chunk = await site.chunk("annual plans refund pro rata", PDF)
        url = site.links.link_for(chunk)
        _, _, page = await site.view(chunk)
        _, _, png = await site.get(image_url(site, page))
        image = Image.open(io.BytesIO(png))
        boxes = marks(page)
        assert len(boxes) >= 3
        for width, height in WINDOWS.items():
            shot = await screenshot(browser, url, width, height, tmp_path)
            check(shot, boxes, image.height / image.width)
