"""The highlight over a located passage: one box per line the passage runs on. Pure functions.

Each line's box is the union of the passage's own characters on that line, so it starts at the passage's first
word and ends at its last: the words before and after it on those lines stay unmarked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.viewer.pages import CharBox

PAD = 0.15  # percent of the page around each line's box: the ink of a character runs a hair past its box
_SAME_LINE = 0.5  # a character belongs to a line when at least half its height overlaps the line's


@dataclass(frozen=True)
class Mark:
    """A highlight box in percent of the page, top-left origin: what a `<mark>` is given as left/top/width/height."""

    left: float
    top: float
    width: float
    height: float


def line_marks(boxes: Sequence[CharBox | None], first: int, last: int) -> tuple[Mark, ...]:
    """The boxes of characters `first`..`last` (inclusive), merged line by line."""
    lines: list[list[float]] = []  # left, top, right, bottom
    for box in boxes[first : last + 1]:
        if box is None:
            continue
        line = lines[-1] if lines else None
        if line is not None and _same_line(line, box):
            line[0], line[1] = min(line[0], box.left), min(line[1], box.top)
            line[2], line[3] = max(line[2], box.right), max(line[3], box.bottom)
        else:
            lines.append([box.left, box.top, box.right, box.bottom])
    return tuple(_padded(*line) for line in lines)


def _same_line(line: list[float], box: CharBox) -> bool:
    """Whether `box` continues `line`: at least half of the shorter of the two overlaps the other vertically."""
    overlap = min(line[3], box.bottom) - max(line[1], box.top)
    height = min(line[3] - line[1], box.bottom - box.top)
    return overlap >= _SAME_LINE * max(height, 1e-6)


def _padded(left: float, top: float, right: float, bottom: float) -> Mark:
    left, top = max(0.0, left - PAD), max(0.0, top - PAD)
    right, bottom = min(100.0, right + PAD), min(100.0, bottom + PAD)
    return Mark(left=round(left, 2), top=round(top, 2), width=round(right - left, 2), height=round(bottom - top, 2))
