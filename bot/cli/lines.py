"""Reading the chat's questions: GNU readline (or libedit) on a terminal, so arrow keys edit the line, Up and Ctrl-R
find earlier questions, and the history is kept across sessions in the data folder; plain lines from a pipe.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TextIO

from bot.cli.render import isatty

log = logging.getLogger(__name__)

HISTORY_FILE = "chat_history"
HISTORY_LENGTH = 1000

try:
    import readline
except ImportError:  # Windows without pyreadline: plain input() still works
    readline = None  # type: ignore[assignment]


class LineReader:
    """`read(prompt)` -> the line, or None at end of input. Ctrl-C raises KeyboardInterrupt; `typed` then says
    whether the line held text (a shell clears such a line rather than leaving)."""

    def __init__(self, stream: TextIO, output: TextIO, *, history: Path | None = None) -> None:
        self.stream = stream
        self.output = output
        self.interactive = isatty(stream) and isatty(output)
        self.history = history if self.interactive and readline is not None else None
        self.typed = False
        if self.history is not None:
            readline.set_history_length(HISTORY_LENGTH)
            try:
                readline.read_history_file(self.history)
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("chat history %s not read: %s", self.history, exc)

    def read(self, prompt: str) -> str | None:
        """One line without its newline; None at end of input (Ctrl-D)."""
        self.typed = False
        if self.interactive:
            try:
                return input(prompt)  # uses readline, because stdin and stdout are the terminal
            except EOFError:
                return None
            except KeyboardInterrupt:
                self.typed = readline is not None and bool(readline.get_line_buffer().strip())
                raise
        self.output.write(prompt)
        self.output.flush()
        line = self.stream.readline()
        if not line:
            return None
        self.output.write(line if line.endswith("\n") else line + "\n")  # a pipe is not echoed: keep the transcript
        return line.rstrip("\n")

    def save(self) -> None:
        """Write the history file (after each question, so a killed chat keeps what was asked)."""
        if self.history is None:
            return
        try:
            self.history.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(self.history)
        except OSError as exc:
            log.warning("chat history %s not saved: %s", self.history, exc)
