"""`folio serve --workers N`: N processes serving Slack side by side, one Redis between them, stopped together.

    this process (the parent)                    each worker (`folio serve --worker-ready FD --listen-fds ...`)
    listens on PORT (and FOLIO_METRICS_PORT)     accepts from the parent's sockets: one queue of connections for
    first, and holds the sockets while it runs   all, open while the parent runs (Socket Mode: each opens its own
                                                 connection; Slack spreads the events)
    runs the embedded Redis when REDIS_URL is    REDIS_URL = that Redis's unix socket: dedupe, thread locks and
    unset, and restarts it when it dies          conversations are shared, so any worker may take any event
    a fresh PROMETHEUS_MULTIPROC_DIR             writes its samples there; /metrics on any worker sums them all
    SIGTERM / SIGINT                             SIGTERM: /readyz 503, stop taking events, let running turns post
                                                 their answers (up to bot.app.SHUTDOWN_GRACE) or hand them back, exit 0
    SIGHUP (a reload: new code, a new .env)      N new workers start beside the old ones; once every new one serves,
                                                 the old ones get SIGTERM and drain: the port never closes
    a worker that dies                           the others keep serving (what waited in the queue goes to them);
                                                 a new worker starts in its place, at once, or after a back-off
                                                 (1 s doubling to 30 s, said in one line) when workers keep dying
    no worker can be started (3 tries in a row   exit 1, so that its supervisor (Docker, systemd) starts Folio
    while none serves), or the embedded Redis    afresh
    gave up

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
import sys
import tempfile
import time
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field

from bot import logs, messages
from bot.app import SHUTDOWN_GRACE, builders
from bot.app.redis_server import EmbeddedRedis
from bot.cli.common import stop_on_signals
from bot.config import Settings
from bot.errors import ConfigurationError, StoreUnavailable
from bot.ports import Listeners
from bot.slack.app import EVENTS_PATH
from bot.store import ConversationStore
from bot.store.lease import process_prefix
from bot.turns import TurnRequest

log = logging.getLogger(__name__)

READY = b"ready\n"  # what a worker writes to its parent once it serves
START_TIMEOUT = 120.0  # seconds a worker may take to start (the first may index the sample corpus)
STOP_TIMEOUT = SHUTDOWN_GRACE + 15.0  # a worker still running after its turns' grace (+ FOLIO_STOP_DELAY) is killed
EXIT_WAIT = 10.0  # seconds a worker that closed its ready pipe may take to exit (closing what it opened)
RESTART_FIRST = 1.0  # seconds before replacing a worker when workers keep dying; doubling ...
RESTART_MAX = 30.0  # ... up to this
STEADY = 60.0  # a worker that served this long before it died is replaced at once: its death is not a pattern
GIVE_UP = 3  # starts failed in a row while no worker serves: Folio stops (exit 1) for its supervisor to start afresh


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
    started: float = field(default_factory=time.monotonic)


async def supervise(settings: Settings, args: argparse.Namespace, *, host: str, port: int, listeners: Listeners) -> int:
    """Run `args.workers` workers of `folio serve` on `listeners` (open while this runs: connections wait in their
    queue whichever worker serves) until a stop signal (0), or until no worker can be started or the embedded Redis
    gives up (1); a worker that dies is replaced."""
    stop = stop_on_signals()
    reload = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, reload.set)
    try:
        async with AsyncExitStack() as stack:
            env = dict(os.environ)
            redis = None
            if settings.redis_url is None:
                if settings.redis_cluster:  # the embedded Redis is a single server
                    raise ConfigurationError(messages.REDIS_CLUSTER_NEEDS_URL)
                redis = await builders.embedded_redis(settings)
                stack.push_async_callback(redis.stop)  # after the workers have stopped (callbacks run last first)
                env["REDIS_URL"] = redis.url
            store = builders.store(settings, url=redis.url if redis is not None else None)
            stack.push_async_callback(store.close)  # after the workers have stopped, before the embedded Redis
            if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
                env["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="folio-metrics-")
                stack.callback(shutil.rmtree, env["PROMETHEUS_MULTIPROC_DIR"], True)
            command = _worker_command(args, host, listeners.port(port), listeners)
            stop_timeout = STOP_TIMEOUT + settings.folio_stop_delay
            pool = _Pool(command, env, size=args.workers, stop_timeout=stop_timeout, listeners=listeners, store=store)
            stack.push_async_callback(pool.stop)
            started = await pool.start(1, stop) and await pool.start_rest(args.workers, stop)
            if not started:
                if not stop.is_set():
                    logs.say("folio: stopping: a worker did not start.", level=logging.ERROR)
                return 0 if stop.is_set() else 1
            _announce(settings, host, listeners.port(port), [worker.process.pid for worker in pool.workers])
            return await pool.watch(stop, redis, reload)
    finally:
        listeners.close()


def _worker_command(args: argparse.Namespace, host: str, port: int, listeners: Listeners) -> list[str]:
    common = ["--env-file", args.env_file, *(["--verbose"] if args.verbose else [])]
    serve = ["serve", "--host", host, "--port", str(port), "--listen-fds", listeners.describe()]
    return [sys.executable, "-m", "bot", *common, *serve]


def _announce(settings: Settings, host: str, port: int, pids: list[int]) -> None:
    """One line once every worker serves, naming their processes (their log lines carry the same ids)."""
    workers = f"{len(pids)} workers: processes {', '.join(map(str, pids))}"
    if settings.slack_app_token is not None:
        logs.say(f"Folio is connected to Slack (Socket Mode, {workers}).")
    else:
        logs.say(f"Folio is listening for Slack on http://{host}:{port}{EVENTS_PATH} ({workers}).")


class _Pool:
    """The running workers: started, watched, replaced when one dies, and stopped together."""

    def __init__(
        self,
        command: list[str],
        env: dict[str, str],
        *,
        size: int,
        stop_timeout: float,
        listeners: Listeners,
        store: ConversationStore,
    ) -> None:
        self._command = command
        self.size = size  # workers wanted
        self._env = env
        self._stop_timeout = stop_timeout  # a worker still draining after this long is killed
        self._listeners = listeners
        self._store = store  # the workers' Redis: the turns of a worker that died are released there
        self._numbers = 0  # the last worker number given
        self._backoff = _Backoff()
        self.workers: list[Worker] = []

    async def start(self, number: int, stop: asyncio.Event) -> bool:
        """Start worker `number` and wait until it serves; False when it exits first or a stop signal comes."""
        self._numbers = max(self._numbers, number)
        read, write = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *self._command,
                "--worker-ready",
                str(write),
                "--worker-number",
                str(number),
                pass_fds=(write, *self._listeners.fds()),
                env=self._env,
                stdin=asyncio.subprocess.PIPE,  # never written: closed when this process ends (stop_with_parent)
            )
        finally:
            os.close(write)
        worker = Worker(number, process)
        self.workers.append(worker)
        ready = asyncio.ensure_future(_read_line(read))
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait([ready, stopped], timeout=START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if ready.done() and ready.result() == READY:
            worker.started = time.monotonic()
            return True
        ready.cancel()
        if not stop.is_set():
            if ready.done():  # its pipe closed without "ready": it is ending, with the status it says why by
                with suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), EXIT_WAIT)
            code = process.returncode if process.returncode is not None else "none (it did not start in time)"
            logs.say(f"folio: worker {number} did not start (exit status {code}).", level=logging.ERROR)
            if process.returncode is None:  # not waited for any longer
                process.kill()
            await process.wait()
            self.workers.remove(worker)
        return False

    async def start_rest(self, workers: int, stop: asyncio.Event) -> bool:
        started = await asyncio.gather(*(self.start(number, stop) for number in range(2, workers + 1)))
        return all(started)

    async def watch(self, stop: asyncio.Event, redis: EmbeddedRedis | None, reload: asyncio.Event) -> int:
        """Until a stop signal (0, or 1 when a worker's drain failed), Redis giving up or no worker starting (1);
        a worker that dies is replaced, `reload` (SIGHUP) replaces them all."""
        while True:
            waits = {
                asyncio.ensure_future(stop.wait()),
                asyncio.ensure_future(reload.wait()),
                *(asyncio.ensure_future(w.process.wait()) for w in self.workers),
            }
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
                await self._release([worker for worker in self.workers if worker.process.returncode is not None])
                if not await self.replace(stop):
                    return 0 if stop.is_set() else 1
                continue
            reload.clear()
            await self.reload(stop)

    async def replace(self, stop: asyncio.Event) -> bool:
        """Start a worker in place of each dead one (after the back-off when workers keep dying), while the others
        serve; False when a stop signal came, or when starts failed GIVE_UP times in a row with no worker serving."""
        failed = 0
        while self._reap() < self.size:
            delay = self._backoff.delay()
            if delay:
                logs.say(
                    f"folio: workers keep dying ({self._backoff.recent()} in the last {STEADY:.0f} s); the next "
                    f"starts in {delay:.0f} s. The lines above say why.",
                    level=logging.ERROR,
                )
                with suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
            if stop.is_set():
                return False
            self._numbers += 1
            if await self.start(self._numbers, stop):
                new = self.workers[-1]
                logs.say(
                    f"folio: worker {new.number} (process {new.process.pid}) serves in place of the one that "
                    f"stopped; {self._serving()}."
                )
                failed = 0
                continue
            if stop.is_set():
                return False
            failed += 1
            self._backoff.died(0.0)
            if self._reap() == 0 and failed >= GIVE_UP:
                logs.say(f"folio: no worker could be started ({failed} tries in a row); stopping.", level=logging.ERROR)
                return False
        return True

    async def _release(self, dead: list[Worker]) -> None:
        """The turns the `dead` workers were running, and their threads' locks: free for the living workers at once,
        not only once their leases lapse (10 s: a redeploy soon after a worker's death used to leave them to the next
        process, late)."""
        for worker in dead:
            holder = process_prefix(worker.process.pid)
            try:
                requests = await self._store.intake.release(holder)
                for request in requests:
                    await self._store.lock(TurnRequest.from_json(request).thread).forget(holder)
            except StoreUnavailable:
                continue  # their leases lapse by themselves, and then they are claimed
            except (ValueError, TypeError, KeyError):
                log.exception("a released turn of worker %d is unreadable; its thread's lock lapses", worker.number)
            if requests:
                log.info("released %d turns of worker %d for the others to take over", len(requests), worker.number)

    def _reap(self) -> int:
        """Forget the workers that died, saying so for each; how many serve."""
        for worker in [worker for worker in self.workers if worker.process.returncode is not None]:
            self.workers.remove(worker)
            served = time.monotonic() - worker.started
            self._backoff.died(served)
            logs.say(
                f"folio: worker {worker.number} (process {worker.process.pid}) stopped with status "
                f"{worker.process.returncode} after {served:.0f} s; {self._serving()}.",
                level=logging.ERROR,
            )
        return len(self.workers)

    def _serving(self) -> str:
        alive = [worker for worker in self.workers if worker.process.returncode is None]
        return f"processes {_pids(alive)} serve" if alive else "no worker serves (connections wait in the queue)"

    async def reload(self, stop: asyncio.Event) -> None:
        """Start as many new workers as run now, beside them on the port; once every new one serves, SIGTERM the old
        ones (each drains: /readyz 503, no new events, its turns finish or are handed back). A new worker that does
        not start stops the reload: the old ones keep serving."""
        old, self.workers = self.workers, []
        first = self._numbers + 1
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
        their exit statuses. The parent's own copies of the sockets close first: once every worker has stopped
        taking events, connections are refused (and Slack retries them) rather than left waiting in the queue."""
        self._listeners.close()
        return await _terminate(self.workers, self._stop_timeout)


class _Backoff:
    """How long to wait before the next worker start: nothing while deaths are rare, RESTART_FIRST doubling up to
    RESTART_MAX for each death of a worker that had served less than STEADY s, within STEADY s of the last."""

    def __init__(self) -> None:
        self._deaths: list[float] = []  # when workers that had not served STEADY s died (or failed to start)

    def died(self, served: float) -> None:
        now = time.monotonic()
        self._deaths = [when for when in self._deaths if now - when < STEADY]
        if served < STEADY:
            self._deaths.append(now)

    def recent(self) -> int:
        return len(self._deaths)

    def delay(self) -> float:
        """0 for the first death in a while; then 1, 2, 4 ... 30 s."""
        if len(self._deaths) < 2:
            return 0.0
        return min(RESTART_FIRST * 2 ** (len(self._deaths) - 2), RESTART_MAX)


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
