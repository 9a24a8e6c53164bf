"""Answers in a terminal: wrapped at word ends to its width, coloured unless NO_COLOR or not a terminal, and with
OSC 8 links where the terminal has them."""

from __future__ import annotations

import asyncio
import fcntl
import io
import os
import re
import struct
import termios
from collections.abc import Iterator
from typing import TextIO

import pytest

from bot.agent.events import Step
from bot.cli.render import StatusLine, Style, answer_text, wrap
from bot.models import Answer, Citation

URL = "file:///home/ada/.folio/documents/sample/refund_policy_2026.pdf#page=1"
ANSWER = Answer(
    text="“Monthly plans: a customer on a monthly plan may request a full refund within 14 days of the charge.” "
    "[1] (dated 2026-01-12)",
    citations=(
        Citation(
            label=1, file="refund_policy_2026.pdf", title="refund_policy_2026.pdf", page=1, container="sample", url=URL
        ),
    ),
    notices=("No model is set up, so I quote the documents instead of writing an answer.",),
    mode="search_only",
)


@pytest.fixture
def terminal() -> Iterator[TextIO]:
    """A real terminal (a pty) 60 columns wide, as the output stream."""
    main, side = os.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 60, 0, 0))
    with os.fdopen(side, "w") as stream:
        yield stream
    os.close(main)


def test_wrapping_keeps_words_links_and_dates_whole(terminal: TextIO) -> None:
    shown = answer_text(ANSWER, Style.detect(terminal, {"NO_COLOR": "1"}))
    assert "charge.” [1]\n(dated 2026-01-12)\n" in shown  # the date moves to the next line whole


def test_wrapping_keeps_words_and_links_whole() -> None:
    text = "a customer on a monthly plan may request a full refund within fourteen days " + URL
    lines = wrap(text, 30).splitlines()
    assert " ".join(lines) == text  # nothing was cut inside a word
    assert all(len(line) <= 30 for line in lines if line != URL) and URL in lines
    assert wrap(text, None) == text  # not a terminal: left as it is


def test_a_terminal_gets_colour_and_its_width(terminal: TextIO) -> None:
    style = Style.detect(terminal, {"TERM": "xterm-256color"})
    assert style == Style(color=True, links=False, width=60)
    shown = answer_text(ANSWER, style)
    assert "\033[33m(No model is set up" in shown  # notices
    assert "\033[36m“\033[0m" in shown and "\033[1m\033[36m[1]\033[0m" in shown  # quote marks, citation numbers
    assert f"  \033[2m{URL}\033[0m" in shown  # no OSC 8 here: the URL is printed


@pytest.mark.parametrize("environ", [{"TERM": "xterm", "NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_no_color_and_dumb_terminals_get_plain_text(terminal: TextIO, environ: dict[str, str]) -> None:
    style = Style.detect(terminal, environ)
    assert not style.color and "\033[" not in answer_text(ANSWER, style)


def test_a_pipe_gets_plain_unwrapped_text() -> None:
    style = Style.detect(io.StringIO(), {"TERM": "xterm-kitty"})
    assert style == Style()
    shown = answer_text(ANSWER, style)
    assert shown == f"({ANSWER.notices[0]})\n{ANSWER.text}\n\n[1] refund_policy_2026.pdf, page 1  {URL}"
    assert not any(line.startswith(">") for line in shown.splitlines())


@pytest.mark.parametrize(
    "environ",
    [
        {"TERM_PROGRAM": "iTerm.app"},
        {"TERM": "xterm-kitty"},
        {"VTE_VERSION": "6800"},
        {"WT_SESSION": "x"},
        {"TERM_PROGRAM": "Apple_Terminal", "FORCE_HYPERLINK": "1"},
    ],
)
def test_terminals_with_osc8_get_clickable_citations(terminal: TextIO, environ: dict[str, str]) -> None:
    style = Style.detect(terminal, {"NO_COLOR": "1", **environ})
    shown = answer_text(ANSWER, style)
    link = f"\033]8;;{URL}\033\\"
    assert f"{link}[1]\033]8;;\033\\\n(dated 2026-01-12)" in shown  # the number in the text opens the page
    assert shown.endswith(f"[1] {link}refund_policy_2026.pdf, page 1\033]8;;\033\\")  # so does the source's name
    assert f"  {URL}" not in shown


@pytest.mark.parametrize(
    "environ",
    [
        {"TERM_PROGRAM": "Apple_Terminal"},
        {"VTE_VERSION": "4205"},
        {"TERM_PROGRAM": "iTerm.app", "FORCE_HYPERLINK": "0"},
    ],
)
def test_other_terminals_get_the_url_printed(terminal: TextIO, environ: dict[str, str]) -> None:
    assert not Style.detect(terminal, environ).links


# What a document can make a model write (or a file be named): escape sequences a terminal obeys. OSC 8 disguises a
# link, OSC 52 writes the clipboard, CSI 2J clears the screen, a carriage return writes over what was shown.
HOSTILE = Answer(
    text="Refunds within 14 days [1]. \x1b]8;;https://evil.example\x1b\\Open the policy\x1b]8;;\x1b\\ "
    "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGU=\x07\x1b[2J\x9b2J 90 days\rRefunds within 30 days",
    citations=(
        Citation(label=1, file="policy\x1b[2J.pdf", title="policy\x1b[2J.pdf", page=1, container="sample", url=URL),
    ),
)
FOLIO_OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;;[^\x1b\x07]*\x1b\\")  # the colours and links Folio adds itself
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.mark.parametrize("environ", [{}, {"TERM": "xterm-256color", "FORCE_HYPERLINK": "1"}])
def test_control_characters_in_an_answer_or_a_file_name_never_reach_the_terminal(
    terminal: TextIO, environ: dict[str, str]
) -> None:
    style = Style.detect(terminal, environ) if environ else Style()
    shown = FOLIO_OWN.sub("", answer_text(HOSTILE, style))
    assert not CONTROL.search(shown), repr(shown)
    words = " ".join(shown.split())
    assert "Open the policy" in words and "Refunds within 30 days" in words  # the words stay, inert


def test_the_status_line_shows_a_hostile_query_inert() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    asyncio.run(
        StatusLine(stream, {"TERM": "xterm"}).step_started(
            Step("search-1", "search", "Searching: x\x1b]52;c;ZXZpbA==\x07\x1b[2J")
        )
    )
    assert not CONTROL.search(stream.getvalue().replace("\r\x1b[K", "")), repr(stream.getvalue())


def _status_shown(columns: int, environ: dict[str, str]) -> str:
    """What the status line writes to a terminal `columns` wide for one long search step."""
    main, side = os.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    with os.fdopen(side, "w") as stream:
        status = StatusLine(stream, environ)
        asyncio.run(status.step_started(Step("search-1", "search", "Searching: " + "refund window monthly plans " * 3)))
        status.clear()
        os.set_blocking(main, False)
        try:
            return os.read(main, 4096).decode()
        except BlockingIOError:  # nothing was written
            return ""
        finally:
            os.close(main)


def test_the_status_line_fits_a_narrow_terminal_and_stays_off_a_dumb_one() -> None:
    shown = _status_shown(30, {"TERM": "xterm"})  # seen: a 100-character line wrapped, and \r\033[K left its start
    drawn = [part.removeprefix("\033[K") for part in shown.split("\r") if part.removeprefix("\033[K")]
    assert drawn and all(len(part) < 30 for part in drawn), drawn
    assert _status_shown(30, {"TERM": "dumb"}) == ""  # seen: ^[[K on a terminal that draws escapes as text
