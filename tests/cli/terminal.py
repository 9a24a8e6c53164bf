"""A pseudo-terminal session for tests: a real `folio` process with the pty as its controlling terminal, so
readline, Ctrl-C (the terminal driver's SIGINT), Ctrl-D and the window width behave as they do for a person."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.fakes.openai_responses import FakeResponses

ROOT = Path(__file__).resolve().parents[2]
_ESCAPES = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]")

CTRL_C = b"\x03"
CTRL_D = b"\x04"
CTRL_R = b"\x12"
LEFT = b"\x1b[D"
UP = b"\x1b[A"
SETTLE = 0.3  # seconds; see Terminal.interrupt


def clean_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """An environment with nothing of the developer's: a terminal type, a home, the data folder, and `extra`."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(data_dir.parent),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(ROOT),
        "FOLIO_DATA_DIR": str(data_dir),
        **extra,
    }


def until_asked(fake: FakeResponses, timeout: float = 30.0) -> None:
    """Wait until the fake model has been asked something: an answer is under way."""
    deadline = time.monotonic() + timeout
    while not fake.requests:
        assert time.monotonic() < deadline, "the model was never asked"
        time.sleep(0.05)


class Terminal:
    """`argv` running in a `columns`-wide pseudo-terminal; `expect` waits for text on the screen."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, columns: int = 100) -> None:
        self.raw = b""
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec at once (the parent has threads)
            try:
                os.chdir(cwd)
                # Ctrl-C means what it means in a terminal, however the tests were started: a shell starts background
                # jobs with SIGINT ignored, and an ignored signal stays ignored across exec.
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.execve(argv[0], list(argv), dict(env))
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        self.status: int | None = None

    @classmethod
    def folio(cls, *args: str, env: Mapping[str, str], cwd: Path, columns: int = 100) -> Terminal:
        return cls([sys.executable, "-m", "bot", *args], env=env, cwd=cwd, columns=columns)

    @property
    def screen(self) -> str:
        """Everything shown so far, escape sequences removed, lines ending in \\n."""
        text = self.raw.decode("utf-8", errors="replace")
        return _ESCAPES.sub("", text).replace("\r\n", "\n")

    def send(self, keys: bytes | str) -> None:
        os.write(self.fd, keys.encode() if isinstance(keys, str) else keys)

    def interrupt(self) -> None:
        """Ctrl-C, a moment after what the screen shows: CPython's readline and event loop notice a signal when their
        select() is interrupted, so a SIGINT that lands just before select() starts waits for the next key. A
        person never types that fast; a test does, unless it pauses."""
        time.sleep(SETTLE)
        self.send(CTRL_C)

    def expect(self, pattern: str, *, after: int = 0, timeout: float = 60.0) -> re.Match[str]:
        """Wait until `pattern` (a regex) appears on the screen after character `after`; fail with the screen."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.compile(pattern).search(self.screen, after)
            if found:
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (self._read(min(0.2, remaining)) == b"" and self.status is not None):
                raise AssertionError(f"{pattern!r} not shown within {timeout} s; the screen:\n{self.screen}")

    @property
    def mark(self) -> int:
        """Where the screen ends now: `expect(..., after=mark)` looks only at what comes next."""
        return len(self.screen)

    def wait(self, timeout: float = 30.0) -> int:
        """The exit code (128 + N when ended by signal N), after reading what is left of the output."""
        deadline = time.monotonic() + timeout
        while self.status is None and time.monotonic() < deadline:
            if self._read(0.1) is None:
                self._reap()
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            raise AssertionError(f"still running after {timeout} s; the screen:\n{self.screen}")
        os.close(self.fd)
        return self.status if self.status >= 0 else 128 - self.status

    def _read(self, timeout: float) -> bytes | None:
        """What the terminal shows next: None when nothing came within `timeout`, b"" once the child has gone."""
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return None
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            chunk = b""
        if chunk:
            self.raw += chunk
        else:
            self._reap()
        return chunk

    def _reap(self) -> None:
        if self.status is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = os.waitstatus_to_exitcode(status)
