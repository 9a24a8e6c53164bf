"""`folio serve --workers N`: N processes serving Slack side by side, one Redis between them, stopped together.

    this process (the parent)                    each worker (`folio serve --worker-ready FD`)
    reserves PORT (SO_REUSEPORT, not listening)  listens on PORT with SO_REUSEPORT: the kernel spreads connections
                                                 (Socket Mode: opens its own connection; Slack spreads the events)
    runs the embedded Redis when REDIS_URL is    REDIS_URL = that Redis's unix socket: dedupe, thread locks and
    unset, and restarts it when it dies          conversations are shared, so any worker may take any event
    a fresh PROMETHEUS_MULTIPROC_DIR             writes its samples there; /metrics on any worker sums them all
    SIGTERM / SIGINT                             SIGTERM: /readyz 503, stop taking events, let running turns post
                                                 their answers (up to bot.app.SHUTDOWN_GRACE) or hand them back, exit 0
    SIGHUP (a reload: new code, a new .env)      N new workers start beside the old ones; once every new one serves,
                                                 the old ones get SIGTERM and drain: the port never closes
    a worker that dies                           the others are stopped and the parent exits 1, so its supervisor
                                                 (Docker, systemd) starts Folio afresh

The parent owns the embedded Redis rather than requiring REDIS_URL: one process holds the data folder's Redis (its
lock), it outlives any worker, and `folio serve --workers 2` works on the embedded defaults as `folio serve` does.
The first worker starts alone: it indexes the sample corpus when needed and checks the tokens, so a start-up problem
is said once, by one process; the others then start together.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
from contextlib import AsyncExitStack, ExitStack, suppress
from dataclasses import dataclass

from bot import logs, messages
from bot.app import SHUTDOWN_GRACE, builders
from bot.app.redis_server import EmbeddedRedis
from bot.cli.common import stop_on_signals
from bot.config import Settings
from bot.errors import ConfigurationError
from bot.slack.app import EVENTS_PATH
from bot.slack.site import port_refused

READY = b"ready\n"  # what a worker writes to its parent once it serves
START_TIMEOUT = 120.0  # seconds a worker may take to start (the first may index the sample corpus)
STOP_TIMEOUT = SHUTDOWN_GRACE + 15.0  # a worker still running after its turns' grace (+ FOLIO_STOP_DELAY) is killed
EXIT_WAIT = 10.0  # seconds a worker that closed its ready pipe may take to exit (closing what it opened)


def tell_parent(fd: int) -> None:
    """Say "ready" on the pipe the parent gave this worker."""
    with suppress(OSError):  # a parent that is gone learns nothing; the worker stops by `stop_with_parent`
        os.write(fd, READY)
        os.close(fd)


def stop_with_parent(stop: asyncio.Event) -> None:
    """Set `stop` when the parent goes away, however it ended (even SIGKILL): its end of our stdin closes then."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()

    async def watch() -> None:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        await reader.read()  # nothing is ever written: this returns at end of file
        stop.set()

    _watchers.add(asyncio.ensure_future(watch()))


_watchers: set[asyncio.Future[None]] = set()  # the loop keeps only weak references to tasks


@dataclass
class Worker:
    number: int
    process: asyncio.subprocess.Process


async def supervise(settings: Settings, args: argparse.Namespace, *, host: str, port: int) -> int:
    """Run `args.workers` workers of `folio serve` until a stop signal (0) or until one dies (1)."""
    if not hasattr(socket, "SO_REUSEPORT"):
        raise ConfigurationError("--workers needs SO_REUSEPORT (Linux, macOS); run one `folio serve` per port here.")
    stop = stop_on_signals()
    reload = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, reload.set)
    with ExitStack() as held:
        port = _reserve(held, host, port, "PORT") if _serves_port(settings) else port
        metrics_port = settings.folio_metrics_port
        if metrics_port is not None and metrics_port != port:
            metrics_port = _reserve(held, host, metrics_port, "FOLIO_METRICS_PORT")
        async with AsyncExitStack() as stack:
            env = dict(os.environ)
            if metrics_port is not None:  # port 0 was made a real one: every worker shares it
                env["FOLIO_METRICS_PORT"] = str(metrics_port)
            redis = None
            if settings.redis_url is None:
                if settings.redis_cluster:  # the embedded Redis is a single server
                    raise ConfigurationError(messages.REDIS_CLUSTER_NEEDS_URL)
                redis = await builders.embedded_redis(settings)
                stack.push_async_callback(redis.stop)  # after the workers have stopped (callbacks run last first)
                env["REDIS_URL"] = redis.url
            if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
                env["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="folio-metrics-")
                stack.callback(shutil.rmtree, env["PROMETHEUS_MULTIPROC_DIR"], True)
            pool = _Pool(_worker_command(args, host, port), env, STOP_TIMEOUT + settings.folio_stop_delay)
            stack.push_async_callback(pool.stop)
            started = await pool.start(1, stop) and await pool.start_rest(args.workers, stop)
            if not started:
                return 0 if stop.is_set() else 1
            _announce(settings, host, port, [worker.process.pid for worker in pool.workers])
            return await pool.watch(stop, redis, reload)


def _serves_port(settings: Settings) -> bool:
    """Whether workers listen on PORT: for Slack's events over HTTP, or for signed document links."""
    return settings.slack_app_token is None or settings.folio_public_url is not None


def _reserve(held: ExitStack, host: str, port: int, setting: str) -> int:
    """Bind `port` with SO_REUSEPORT without listening: a port in use is said once, here, and port 0 becomes the
    port every worker then shares. The socket stays open (and takes no connections) until the workers stop.

    SO_REUSEADDR as every listener has it (aiohttp's too): without it a connection of a stopped Folio still in
    TIME-WAIT (~60 s after a keep-alive connection or a /readyz probe) made a free port look "in use"."""
    probe = held.enter_context(socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET))
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        probe.bind((host, port))
    except OSError as exc:
        raise port_refused(exc, host, port, setting) from exc
    return int(probe.getsockname()[1])


def _worker_command(args: argparse.Namespace, host: str, port: int) -> list[str]:
    common = ["--env-file", args.env_file, *(["--verbose"] if args.verbose else [])]
    return [sys.executable, "-m", "bot", *common, "serve", "--host", host, "--port", str(port)]


def _announce(settings: Settings, host: str, port: int, pids: list[int]) -> None:
    """One line once every worker serves, naming their processes (their log lines carry the same ids)."""
    workers = f"{len(pids)} workers: processes {', '.join(map(str, pids))}"
    if settings.slack_app_token is not None:
        logs.say(f"Folio is connected to Slack (Socket Mode, {workers}).")
    else:
        logs.say(f"Folio is listening for Slack on http://{host}:{port}{EVENTS_PATH} ({workers}).")


class _Pool:
    """The running workers: started, watched, and stopped together."""

    def __init__(self, command: list[str], env: dict[str, str], stop_timeout: float) -> None:
        self._command = command
        self._env = env
        self._stop_timeout = stop_timeout  # a worker still draining after this long is killed
        self.workers: list[Worker] = []

    async def start(self, number: int, stop: asyncio.Event) -> bool:
        """Start worker `number` and wait until it serves; False when it exits first or a stop signal comes."""
        read, write = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *self._command, "--worker-ready", str(write), "--worker-number", str(number), pass_fds=(write,),
                env=self._env,
                stdin=asyncio.subprocess.PIPE,  # never written: closed when this process ends (stop_with_parent)
            )  # fmt: skip
        finally:
            os.close(write)
        self.workers.append(Worker(number, process))
        ready = asyncio.ensure_future(_read_line(read))
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait([ready, stopped], timeout=START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if ready.done() and ready.result() == READY:
            return True
        ready.cancel()
        if not stop.is_set():
            if ready.done():  # its pipe closed without "ready": it is ending, with the status it says why by
                with suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), EXIT_WAIT)
            code = process.returncode if process.returncode is not None else "none (it did not start in time)"
            logs.say(f"folio: worker {number} did not start (exit status {code}); stopping.", level=logging.ERROR)
        return False

    async def start_rest(self, workers: int, stop: asyncio.Event) -> bool:
        started = await asyncio.gather(*(self.start(number, stop) for number in range(2, workers + 1)))
        return all(started)

    async def watch(self, stop: asyncio.Event, redis: EmbeddedRedis | None, reload: asyncio.Event) -> int:
        """Until a stop signal (0, or 1 when a worker's drain failed), a worker's death or Redis giving up (1);
        `reload` (SIGHUP) replaces the workers on the way."""
        while True:
            waits = {asyncio.ensure_future(stop.wait()), asyncio.ensure_future(reload.wait()),
                     *(asyncio.ensure_future(w.process.wait()) for w in self.workers)}  # fmt: skip
            if redis is not None:
                waits.add(asyncio.ensure_future(redis.gave_up.wait()))
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for waiter in waits:
                waiter.cancel()
            if stop.is_set():
                return 0 if all(code == 0 for code in await self.stop()) else 1
            if redis is not None and redis.gave_up.is_set():
                logs.say(f"folio: {messages.EMBEDDED_REDIS_GAVE_UP}", level=logging.ERROR)
                return 1
            if any(worker.process.returncode is not None for worker in self.workers):
                break
            reload.clear()
            await self.reload(stop)
        for worker in self.workers:
            if worker.process.returncode is not None:
                logs.say(f"folio: worker {worker.number} (process {worker.process.pid}) stopped with status "
                         f"{worker.process.returncode}; stopping the others so that Folio starts afresh.",
                         level=logging.ERROR)  # fmt: skip
        return 1

    async def reload(self, stop: asyncio.Event) -> None:
        """Start as many new workers as run now, beside them on the port; once every new one serves, SIGTERM the old
        ones (each drains: /readyz 503, no new events, its turns finish or are handed back). A new worker that does
        not start stops the reload: the old ones keep serving."""
        old, self.workers = self.workers, []
        first = max(worker.number for worker in old) + 1
        logs.say(f"folio: reloading: starting {len(old)} new workers beside processes {_pids(old)}")
        started = await asyncio.gather(*(self.start(number, stop) for number in range(first, first + len(old))))
        new, self.workers = self.workers, old
        if not all(started):
            await _terminate(new, self._stop_timeout)
            logs.say(f"folio: reload failed: a new worker did not start; processes {_pids(old)} keep serving")
            return
        self.workers = new
        logs.say(f"folio: reloaded: processes {_pids(new)} serve; processes {_pids(old)} finish their turns and stop")
        await _terminate(old, self._stop_timeout)

    async def stop(self) -> list[int]:
        """SIGTERM every worker (each lets its running turns finish), kill any still running after STOP_TIMEOUT;
        their exit statuses."""
        return await _terminate(self.workers, self._stop_timeout)


async def _terminate(workers: list[Worker], timeout: float) -> list[int]:
    """SIGTERM `workers` (each drains), kill any still running after `timeout` s; their exit statuses."""
    for worker in workers:
        if worker.process.returncode is None:
            worker.process.terminate()
    waiting = [worker.process.wait() for worker in workers]
    try:
        return list(await asyncio.wait_for(asyncio.gather(*waiting), timeout))
    except TimeoutError:
        for worker in workers:
            if worker.process.returncode is None:
                worker.process.kill()
        return list(await asyncio.gather(*(worker.process.wait() for worker in workers)))


def _pids(workers: list[Worker]) -> str:
    return ", ".join(str(worker.process.pid) for worker in workers)


async def _read_line(fd: int) -> bytes:
    """One line from a pipe (b"" when its writer closed it without one)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb"))
    try:
        return await reader.readline()
    finally:
        transport.close()
