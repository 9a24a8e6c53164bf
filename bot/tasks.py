"""Turns run after the ack, as asyncio tasks this set keeps referenced until they finish; under CPU overload a new
turn starts only while the event loop keeps up (`LoopGate`), so acks and Redis replies are not stuck behind turns."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Coroutine
from contextlib import suppress
from typing import Any

from bot import metrics

log = logging.getLogger(__name__)


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
        """Wait until every task, including ones started meanwhile, has finished; TimeoutError after `timeout`."""

        async def every() -> None:
            while self._running:
                await asyncio.gather(*list(self._running), return_exceptions=True)

        await asyncio.wait_for(every(), timeout)
        await self.gate.stop()

    async def cancel(self) -> None:
        """Stop every running task (on shutdown)."""
        for task in list(self._running):
            task.cancel()
        await self.drain()

    def __len__(self) -> int:
        return len(self._running)


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
