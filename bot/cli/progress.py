"""A one-line progress bar on stderr, drawn only when stderr is a terminal."""

from __future__ import annotations

import sys
from typing import TextIO


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
