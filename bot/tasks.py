"""Turns run after the ack, as asyncio tasks this set keeps referenced until they finish; under CPU overload a new
turn starts only while the event loop keeps up (`LoopGate`), so acks and Redis replies are not stuck behind turns.
Housekeeping that `folio serve` repeats while it runs (watch notes left waiting, old thread files) is `every`."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager, suppress
from typing import Any

from bot import metrics

log = logging.getLogger(__name__)

HAND_BACK = "hand-back"  # the cancel message of a turn handed back on shutdown (see the turn contract)
STOP_WAIT = 5.0  # seconds a stopping `every` lets a run in flight finish before it is cancelled


class BackgroundTasks:
    """Holds running turns: the event loop keeps only weak references to tasks, so an unreferenced one can vanish."""

    def __init__(self, *, gate: LoopGate | None = None) -> None:
        self._running: set[asyncio.Task[None]] = set()
        self.gate = gate if gate is not None else LoopGate()

    def spawn(self, work: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        """Start `work` now; its errors are logged, never lost."""
        task = asyncio.create_task(work, name=name)
        self._running.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    async def drain(self, *, timeout: float | None = None) -> None:
        """Wait until every task, including ones started meanwhile, has finished; TimeoutError after `timeout`, with
        the tasks still running left running (asyncio.wait, not gather: a cancelled gather cancels its tasks, and so
        a timed-out drain once cancelled every turn while saying "stopping 0 turns")."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while self._running:
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                raise TimeoutError
            await asyncio.wait(list(self._running), timeout=left)
        await self.gate.stop()

    async def cancel(self, message: str | None = None) -> list[str]:
        """Stop every running task (on shutdown), `message` as the cancel's; the names of those stopped."""
        stopped = self.names()
        for task in list(self._running):
            task.cancel(message)
        await self.drain()
        return stopped

    async def hand_back(self) -> list[str]:
        """Give up the turns still running, for another process to run (the names of those handed back).

        Today a turn's delivery lives only in this process, so a turn handed back is stopped, not re-run; with a
        durable intake, the consumer's own `hand_back()` leaves its deliveries for another worker to claim (passed
        to `finish_or_hand_back` as `hand_back`, it runs first). The cancel says HAND_BACK, so a turn can tell it
        from a failure and post nothing: its thread is answered by whoever takes it over."""
        return await self.cancel(HAND_BACK)

    def names(self) -> list[str]:
        """The names of the tasks still running, sorted (a turn's: "turn CHANNEL/THREAD_TS")."""
        return sorted(task.get_name() for task in self._running if not task.done())

    def __len__(self) -> int:
        return len(self._running)


async def finish_or_hand_back(
    tasks: BackgroundTasks, *, grace: float, hand_back: Callable[[], Awaitable[object]] | None = None
) -> list[str]:
    """On shutdown: let the running turns finish within `grace` seconds, then hand back those that did not; the log
    says how many ran, how many finished and which were handed back. The names of those handed back.

    `hand_back`: the durable intake's own hand-back (the consumer's `hand_back()`, which cancels its turns with
    HAND_BACK and leaves their records for another process), run first; what it leaves running is handed back here."""
    running = len(tasks)
    if not running:
        log.info("stopping: no turns running")
        return []
    log.info("stopping: %d turns running; waiting up to %.0f s for them to finish", running, grace)
    loop = asyncio.get_running_loop()
    began = loop.time()
    try:
        await tasks.drain(timeout=grace)
    except TimeoutError:
        unfinished = tasks.names()
        if hand_back is not None:
            await hand_back()
        await tasks.hand_back()
        log.warning(
            "stopping: handed back %d turns that did not finish within %.0f s: %s",
            len(unfinished),
            grace,
            ", ".join(unfinished),
        )
        return unfinished
    log.info("stopping: every turn finished (%.1f s)", loop.time() - began)
    return []


class LoopGate:
    """Admission for new turns: one may start at once while the event loop keeps up, else it waits its turn.

    Every turn shares one event loop with the acks. Past what one process can do (~30 turns/s in benchmarks/bench.py) each
    loop pass runs every ready turn, so an ack or a Redis reply waits seconds: Slack retries, Redis pool waits time
    out. A monitor measures how late a short sleep wakes (the loop's lag); while it is over `max_lag`, new turns wait
    in arrival order and are let in one per calm tick. Turns already running are never held back.
    """

    def __init__(self, *, max_lag: float = 0.05, tick: float = 0.01, idle: float = 2.0) -> None:
        self._max_lag = max_lag
        self._tick = tick
        self._idle = idle  # the monitor stops after this long without turns, so nothing runs when Folio is idle
        self.lag = 0.0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._monitor: asyncio.Task[None] | None = None
        self._last_entry = 0.0

    async def wait_for_room(self) -> None:
        """Return when a new turn may start: at once while the loop keeps up, else in arrival order."""
        loop = asyncio.get_running_loop()
        self._last_entry = loop.time()
        if self._monitor is None or self._monitor.done():
            self.lag = 0.0
            self._monitor = asyncio.create_task(self._watch(), name="folio-loop-gate")
        if self.lag <= self._max_lag and not self._waiters:
            return
        waiter = loop.create_future()
        self._waiters.append(waiter)
        with metrics.waiting_for_admission():
            await waiter  # a turn cancelled while waiting cancels its waiter, which `_let_one_in` then skips

    async def stop(self) -> None:
        """Stop the monitor (it starts again with the next turn)."""
        monitor, self._monitor = self._monitor, None
        if monitor is not None and not monitor.done():
            monitor.cancel()
            with suppress(asyncio.CancelledError):
                await monitor

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while self._waiters or loop.time() - self._last_entry < self._idle:
            started = loop.time()
            await asyncio.sleep(self._tick)
            self.lag = max(0.0, loop.time() - started - self._tick)
            if self.lag <= self._max_lag:
                self._let_one_in()

    def _let_one_in(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


@asynccontextmanager
async def every(
    seconds: float, work: Callable[[], Awaitable[None]], *, name: str, stop_wait: float = STOP_WAIT
) -> AsyncIterator[None]:
    """While the block runs, run `work` every `seconds` (0: never), the first time `seconds` after entering. A run
    that fails is logged and the next one comes on time; on the way out a run in flight has `stop_wait` seconds to
    finish, then is cancelled."""
    if seconds <= 0:
        yield
        return
    stop = asyncio.Event()

    async def repeat() -> None:
        while True:
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), seconds)
            if stop.is_set():
                return
            try:
                await work()
            except Exception:  # what `work` did not foresee must not end the timer
                log.warning("%s failed; it runs again in %.0f s", name, seconds, exc_info=True)

    running = asyncio.create_task(repeat(), name=name)
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait([running], timeout=stop_wait)
        running.cancel()
        with suppress(asyncio.CancelledError):
            await running
