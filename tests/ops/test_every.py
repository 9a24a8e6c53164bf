"""`folio serve`'s housekeeping timer: a run that fails is not the last, and leaving stops it at once."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.tasks import every


async def test_work_runs_again_after_a_failure_and_stops_when_the_block_ends(caplog: pytest.LogCaptureFixture) -> None:
    runs: list[float] = []

    async def work() -> None:
        runs.append(time.monotonic())
        if len(runs) == 1:
            raise RuntimeError("the index could not be reached")

    async with every(0.05, work, name="sweep"):
        while len(runs) < 3:
            await asyncio.sleep(0.01)
    left = len(runs)
    await asyncio.sleep(0.2)

    assert len(runs) == left  # nothing runs after the block
    assert "sweep failed; it runs again in 0 s" in caplog.text and "the index could not be reached" in caplog.text


async def test_leaving_waits_only_so_long_for_a_run_that_hangs() -> None:
    started = asyncio.Event()

    async def hangs() -> None:
        started.set()
        await asyncio.sleep(3600)

    began = time.monotonic()
    async with every(0.01, hangs, name="sweep", stop_wait=0.1):
        await started.wait()

    assert time.monotonic() - began < 2


async def test_zero_seconds_never_runs() -> None:
    runs: list[int] = []

    async def work() -> None:
        runs.append(1)

    async with every(0, work, name="sweep"):
        await asyncio.sleep(0.1)

    assert runs == []
