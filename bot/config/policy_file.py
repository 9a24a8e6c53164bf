"""channels.yaml as it is now: read again when the file changes, so every turn follows an admin's edit at once.

A turn asks for the policy (`PolicyFile.current`), which costs one `stat` of the file. An edit that does not load (a
typo, a file half written by an editor, a file the parser cannot read at all) keeps the policy in force, which the
edit was meant to change and which never widens by waiting; the log says what is wrong with the file (file, line,
what) at once, and again every REMIND_EVERY seconds while it stays broken; `folio doctor` says it too.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from bot.config.channels import ChannelPolicy, load_policy
from bot.errors import ConfigurationError

log = logging.getLogger(__name__)

Stamp = tuple[int, int, int] | None  # (inode, size, mtime in ns); None: the file is not there
REMIND_EVERY = 300.0  # seconds between log lines saying the file is still broken


class PolicyFile:
    """The channel policy read from `path`, re-read whenever the file's stamp changes."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.monotonic) -> None:
        """Read the file now; a file that does not load is a ConfigurationError, as at every start."""
        self.path = path
        self._clock = clock
        self._stamp = _stamp(path)
        self._policy = load_policy(path)
        self._broken: str | None = None  # what is wrong with the file on disk, while it does not load
        self._told = 0.0

    def current(self) -> ChannelPolicy:
        stamp = _stamp(self.path)
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._policy = load_policy(self.path)
                self._broken = None
                log.info("channel policy %s read again after a change", self.path)
            except ConfigurationError as exc:
                self._broken = str(exc)
                self._tell()
        elif self._broken is not None and self._clock() - self._told >= REMIND_EVERY:
            self._tell()
        return self._policy

    def _tell(self) -> None:
        self._told = self._clock()
        broken = (self._broken or "").rstrip(".")
        log.error("%s. The channel policy read before stays in force until the file is fixed.", broken)


def _stamp(path: Path) -> Stamp:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns
