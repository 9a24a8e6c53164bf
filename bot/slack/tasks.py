"""Turns run after the ack, as asyncio tasks this set keeps referenced until they finish."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class BackgroundTasks:
    """Holds running turns: the event loop keeps only weak references to tasks, so an unreferenced one can vanish."""

    def __init__(self) -> None:
        self._running: set[asyncio.Task[None]] = set()

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

    async def drain(self) -> None:
        """Wait until every task, including ones started meanwhile, has finished."""
        while self._running:
            await asyncio.gather(*list(self._running), return_exceptions=True)

    async def cancel(self) -> None:
        """Stop every running task (on shutdown)."""
        for task in list(self._running):
            task.cancel()
        await self.drain()

    def __len__(self) -> int:
        return len(self._running)
