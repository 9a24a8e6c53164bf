"""New turns wait while the event loop is overloaded, so the acks sharing it stay prompt; they start once it keeps up."""

from __future__ import annotations

import asyncio
import time

from bot.tasks import BackgroundTasks, LoopGate


async def hog_the_loop(gate: LoopGate) -> None:
    """Turn work holding the loop 0.5 s, as 200 busy threads do, until the gate's monitor notices."""
    await asyncio.sleep(0.05)  # the monitor is asleep, waiting for its next tick
    time.sleep(0.5)

    async def noticed() -> None:
        while gate.lag <= 0.05:
            await asyncio.sleep(0)

    await asyncio.wait_for(noticed(), 5)


async def test_a_new_turn_waits_while_the_loop_lags_and_starts_once_it_keeps_up() -> None:
    gate = LoopGate(max_lag=0.05, tick=0.2)
    await gate.wait_for_room()  # a calm loop: at once
    await hog_the_loop(gate)

    waiting = asyncio.create_task(gate.wait_for_room())
    await asyncio.sleep(0)
    assert not waiting.done()
    await asyncio.wait_for(waiting, 5)  # let in at the next calm tick
    await gate.stop()


async def test_turns_let_in_after_a_lag_start_in_arrival_order() -> None:
    tasks = BackgroundTasks(gate=LoopGate(max_lag=0.05, tick=0.2))
    await tasks.gate.wait_for_room()
    await hog_the_loop(tasks.gate)
    started: list[int] = []

    async def turn(number: int) -> None:
        await tasks.gate.wait_for_room()
        started.append(number)

    for number in range(5):
        tasks.spawn(turn(number), name=f"turn {number}")
    await asyncio.wait_for(tasks.drain(), 5)

    assert started == [0, 1, 2, 3, 4]
