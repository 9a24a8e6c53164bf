"""A one-line progress bar on stderr, drawn only when stderr is a terminal; `folio index`'s progress."""

from __future__ import annotations

import shutil
import sys
from typing import TextIO

from bot import messages
from bot.cli.render import printable
from bot.ingest.pipeline import FileEvent


class ProgressBar:
    """`with ProgressBar(total, "Indexing") as bar: bar.advance(label)`; silent when not on a terminal."""

    def __init__(self, total: int, title: str, *, stream: TextIO | None = None) -> None:
        self.total = max(total, 0)
        self.title = title
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def advance(self, label: str = "", step: int = 1) -> None:
        self.done += step
        if not self.enabled:
            return
        width = 30
        filled = width * self.done // self.total if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r\033[K{self.title} [{bar}] {self.done}/{self.total} {label[:40]}")
        self.stream.flush()


class IndexProgress:
    """What `folio index` is doing, fed with the pipeline's FileEvents: on a terminal a bar with files, pages and
    passages so far and the file being read; otherwise (a log, a pipe) one line per file as it is done."""

    def __init__(self, total: int, *, stream: TextIO | None = None) -> None:
        self.total = max(total, 0)
        self.done = self.pages = self.passages = 0
        self.current = ""
        self.stream = stream or sys.stderr
        self.terminal = self.stream.isatty()

    def __enter__(self) -> IndexProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.terminal:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def __call__(self, event: FileEvent) -> None:
        name = printable(event.name)
        if event.state == "reading":
            self.current = name
        else:
            self.done += 1
            self.pages += event.pages
            self.passages += event.passages
            if not self.terminal:
                line = messages.file_progress(
                    self.done, self.total, name, event.state, pages=event.pages, passages=event.passages
                )
                print(line, file=self.stream, flush=True)
                return
        if self.terminal:
            self._draw()

    def _draw(self) -> None:
        width = 24
        filled = width * self.done // self.total if self.total else width
        counts = messages.index_progress(self.done, self.total, pages=self.pages, passages=self.passages)
        columns = shutil.get_terminal_size().columns
        line = f"Indexing [{'#' * filled}{'-' * (width - filled)}] {counts}  {self.current}"
        self.stream.write(f"\r\033[K{line[: max(columns - 1, 1)]}")
        self.stream.flush()
