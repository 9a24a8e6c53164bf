"""Where a governed turn's bookkeeping goes: what it spent, added to the usage counters every replica shares, and its
trace, kept beside the conversation for admins. The one recorder (bot.turns.observer.TurnRecorder, given a `Ledger`)
gathers both and calls `write_ledger` once, when the turn has finished, in a task of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from bot.store.traces import TraceStore
from bot.store.usage import TurnUsage, UsageStore
from bot.turns.request import TurnRequest
from bot.turns.trace import ANSWERED, Trace

log = logging.getLogger(__name__)

Spawn = Callable[..., Any]  # BackgroundTasks.spawn(coroutine, name=...)


@dataclass(frozen=True)
class Ledger:
    """Where governed turns write: the usage counters, and the traces (None: FOLIO_TRACES=false)."""

    usage: UsageStore
    traces: TraceStore | None


def write_ledger(
    ledger: Ledger, request: TurnRequest, usage: TurnUsage, trace: Trace | None, *, at: float
) -> Coroutine[Any, Any, None]:
    """The usage counters and the trace, in one round trip; a failure is logged (counters a little short beat a turn
    that fails after answering)."""
    return _write(ledger, request, usage, trace, at)


async def _write(ledger: Ledger, request: TurnRequest, usage: TurnUsage, trace: Trace | None, at: float) -> None:
    day = datetime.fromtimestamp(at, timezone.utc).date()
    also = []
    if trace is not None and ledger.traces is not None:
        also.append(ledger.traces.call(request.thread, trace.to_json()))
        if trace.outcome in ANSWERED and not request.is_dm:  # an admin's Home tab lists channel answers
            also.append(ledger.traces.listing(request.thread, at=at))
    try:
        await ledger.usage.add(usage, day=day, also=also)
    except Exception:
        log.warning("could not record the usage or trace of %s", request.thread, exc_info=True)
