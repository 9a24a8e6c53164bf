"""Answers as a terminal shows them: wrapped to its width at word ends, coloured where colour is welcome, and with
clickable citation links where the terminal supports OSC 8 hyperlinks. Pure functions of an Answer and a Style.

Colour follows https://no-color.org (NO_COLOR set and not empty: none) and is off when the output is not a terminal
or TERM=dumb. OSC 8 (https://gist.github.com/egmontkob/eb114294efbcd5adb1944c9f3cb5feda) has no query for support,
so it is on for the terminals known to have it (FORCE_HYPERLINK=1 or 0 decides otherwise); elsewhere the URL is
printed after each citation, as before.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from bot.agent.events import AnswerText, Step
from bot.models import Answer, Citation, Scope

RESET = "\033[0m"
BOLD = "\033[1m"
DIM = "\033[2m"
YELLOW = "\033[33m"
CYAN = "\033[36m"
NBSP = "\u00a0"  # textwrap does not break lines at it

_HYPERLINK_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "vscode", "ghostty", "Hyper", "Tabby"})
_HYPERLINK_TERMS = frozenset({"xterm-kitty", "alacritty", "foot", "xterm-ghostty", "wezterm"})
_HYPERLINK_MARKERS = ("WT_SESSION", "KONSOLE_VERSION", "DOMTERM")  # Windows Terminal, Konsole, DomTerm
_MARKER = re.compile(r"\[(\d+)\]")
# C0 controls but tab and line feed, DEL and C1: a terminal obeys them (OSC 8 disguises a link, OSC 52 writes the
# clipboard, CSI clears the screen, a carriage return writes over a line), so text from a model or a file has none.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_DATED = re.compile(r"\((dated [^()]+)\)")


@dataclass(frozen=True)
class Style:
    """How to draw for one output: colour, OSC 8 links, and the width to wrap at (None: do not wrap)."""

    color: bool = False
    links: bool = False
    width: int | None = None

    @classmethod
    def detect(cls, stream: TextIO, environ: Mapping[str, str]) -> Style:
        """What `stream` supports, judged from whether it is a terminal and from the environment."""
        if not isatty(stream):
            return cls()
        dumb = environ.get("TERM", "") == "dumb"
        return cls(
            color=not environ.get("NO_COLOR") and not dumb,
            links=_hyperlinks(environ) and not dumb,
            width=_width(stream),
        )

    def paint(self, text: str, *codes: str) -> str:
        return f"{''.join(codes)}{text}{RESET}" if self.color and text else text

    def link(self, url: str | None, label: str) -> str:
        """`label` as an OSC 8 hyperlink to `url` when links are on."""
        if not (self.links and url):
            return label
        return f"\033]8;;{url}\033\\{label}\033]8;;\033\\"


def printable(text: str) -> str:
    """`text` without the control characters a terminal would obey: what a model or a file name wrote stays inert."""
    return _CONTROL.sub("", text)


def answer_text(answer: Answer, style: Style) -> str:
    """Notices, the answer, then its citations as a numbered list."""
    urls = {citation.label: citation.url and printable(citation.url) for citation in answer.citations}
    blocks = [style.paint(wrap(f"({printable(notice)})", style.width), YELLOW) for notice in answer.notices]
    text = _DATED.sub(lambda found: found.group(0).replace(" ", NBSP), printable(answer.text))  # a date stays whole
    blocks.append(_decorate(wrap(text, style.width).replace(NBSP, " "), urls, style))
    if answer.citations:
        blocks.append("")
        blocks.extend(citation_line(citation, style) for citation in answer.citations)
    return "\n".join(blocks)


def citation_line(citation: Citation, style: Style) -> str:
    """`[1] handbook.pdf, page 12  https://...#page=12`; with OSC 8, the name is the link and the URL is left out."""
    url = citation.url and printable(citation.url)
    where = printable(f"{citation.title}{citation.place}")  # `orders.xlsx · sheet Orders, rows 2-9` for a table
    label = style.paint(f"[{citation.label}]", BOLD, CYAN)
    if style.links and url:
        return f"{label} {style.link(url, where)}"
    return f"{label} {where}" + (f"  {style.paint(url, DIM)}" if url else "")


def wrap(text: str, width: int | None) -> str:
    """Each line of `text` wrapped at `width` columns between words; a word longer than the width (a URL) is kept
    whole. Indented lines keep their indent."""
    if not width:
        return text
    lines = []
    for line in text.split("\n"):
        indent = line[: len(line) - len(line.lstrip(" "))]
        lines.append(
            textwrap.fill(line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
            if line.strip()
            else line
        )
    return "\n".join(lines)


def _decorate(text: str, urls: Mapping[int, str | None], style: Style) -> str:
    """Colour the quote marks, citation numbers and dates; make each citation number a link."""
    if not (style.color or style.links):
        return text

    def marker(found: re.Match[str]) -> str:
        label = int(found.group(1))
        if label not in urls:
            return found.group(0)
        return style.link(urls[label], style.paint(found.group(0), BOLD, CYAN))

    text = _MARKER.sub(marker, text)
    text = _DATED.sub(lambda found: style.paint(found.group(0), DIM), text)
    for mark in "“”":
        text = text.replace(mark, style.paint(mark, CYAN))
    return text


class StatusLine:
    """The terminal's view of a turn (a `bot.turns.TurnView`): each step's title ("Searching: ...") redrawn on one
    line, erased before the answer is printed. Silent when not on a terminal, or on a dumb one (it would print the
    escape codes). The line is cut to the terminal's width: a line that wrapped would leave its first part on screen,
    since `\r\033[K` clears only the row the cursor is on. The command prints the answer (or the error) itself."""

    def __init__(self, stream: TextIO, environ: Mapping[str, str]) -> None:
        self.stream = stream
        self.enabled = isatty(stream) and environ.get("TERM", "") != "dumb"
        self.width = min(_width(stream) or 104, 104) - 4  # room for "..." and the cursor

    async def working(self, title: str) -> None:
        return None

    def writes_text(self) -> bool:
        return False

    def shown_ts(self) -> str | None:
        return None

    async def step_started(self, step: Step) -> None:
        """The step's title, in place of the last one."""
        if self.enabled:
            self.stream.write(f"\r\033[K{printable(step.title)[: max(self.width, 1)]}...")
            self.stream.flush()

    async def step_ended(self, step: Step) -> None:
        return None

    async def text(self, piece: AnswerText) -> None:
        return None

    async def answer(self, answer: Answer, *, scope: Scope, turn_index: int, basis: str | None) -> str | None:
        self.clear()
        return None

    async def notice(self, text: str) -> None:
        return None

    async def failed(self, error: BaseException) -> str | None:
        self.clear()
        return None

    def clear(self) -> None:
        """Erase the line before the answer is printed."""
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()


def isatty(stream: TextIO) -> bool:
    """Whether `stream` is a terminal (False for closed or fake streams)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or fake stream
        return False


def _width(stream: TextIO) -> int | None:
    try:
        return os.get_terminal_size(stream.fileno()).columns or None
    except (AttributeError, OSError, ValueError):
        return None


def _hyperlinks(environ: Mapping[str, str]) -> bool:
    forced = environ.get("FORCE_HYPERLINK")
    if forced is not None:
        return forced not in ("", "0")
    if environ.get("TERM_PROGRAM") in _HYPERLINK_PROGRAMS or environ.get("TERM") in _HYPERLINK_TERMS:
        return True
    if any(name in environ for name in _HYPERLINK_MARKERS):
        return True
    vte = environ.get("VTE_VERSION", "")  # GNOME Terminal, Tilix, ...: 0.50 and later
    return vte.isdigit() and int(vte) >= 5000
