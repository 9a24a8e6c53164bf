"""The consumer: the ONE door of every turn a surface starts. In every serving process it runs the turn of each
accepted delivery, so that none is lost. It knows no surface: it is given how to run one attempt and how to tell a
thread that it gives up.

    consumer = Consumer(store=..., tasks=..., run=runner, give_up=give_up)   # one per serving Folio (the surface
                                       # wires it: bot.slack.app.serving gives it run_slack_turn)
    await consumer.accept(request, new=..., reply=...)  # before the ack; StoreUnavailable: do not ack (Slack retries)
    await consumer.hand_back()         # shutdown: stop claiming; stop unfinished turns, make them claimable at once
    await consumer.stop()              # stop claiming and renewing (running turns are Folio's to drain)

The life of a record (bot.store.intake): `accept` records the delivery and takes the thread's place in line (and
its hold, when the thread is idle) in one round trip; this process then runs the turn at once and renews the
record's lease while it runs. When the process dies the lease lapses, and the claim loop of any serving process
(every `claim_every` s) takes the record and runs the turn again (it lines up anew in its thread):
 - the message an earlier attempt showed (stream or placeholder) is updated, never a second one posted;
 - when that message is already in the saved conversation, the answer was posted and saved: marked done, not rerun;
 - a plain reply in a thread runs only if the thread is Folio's;
 - past MAX_ATTEMPTS the thread is told (a turn that kills every worker it runs on stops there).
Each attempt is one call of the runner (for Slack `run_slack_turn`: the one turn, bot.turns.turn, with its recorder:
one turn record and its metrics an attempt). A turn whose thread lease lapsed under it (LeaseLost) has told the
thread LEASE_LOST in the message the next attempt then updates, and is handed back counted as an attempt; a
hand-back at shutdown shows nothing. The record's lease and the thread lock's are two leases under one rule: why
two, see bot.store.lease.
The window left open: in a thread that shows only a status line, the answer is the first message; a process killed
after posting it and before noting its ts (one Redis write) gets its answer posted again by the next attempt.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from bot import metrics
from bot.errors import LeaseLost, StoreUnavailable
from bot.models import Conversation
from bot.store import Claimed, ConversationStore, ThreadKey, ThreadLock
from bot.store.lease import LEASE_LOST_CANCEL, process_prefix, renew_every
from bot.tasks import HAND_BACK, BackgroundTasks  # HAND_BACK: the cancel message of a turn handed back at shutdown
from bot.turns.request import TurnRequest

log = logging.getLogger(__name__)

CLAIM_EVERY = 1.0  # seconds between looks for records whose worker died (at most a third of the lease)
CLAIM_LIMIT = 20  # records one process takes per look, so that one survivor does not take every orphan at once
MAX_ATTEMPTS = 3

OnShown = Callable[[str], Awaitable[None]]  # told the ts of each message the turn shows, as soon as it exists


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One attempt at an accepted turn, as the runner gets it."""

    resumed_ts: str | None  # the message an earlier attempt showed: edited, never a second one posted
    lock: ThreadLock | None  # the thread's lock when `accept` took it already (else the turn takes it)
    on_shown: OnShown  # hears the ts of each message the attempt shows, so that a later attempt can find it


Runner = Callable[[TurnRequest, Attempt], Awaitable[None]]  # runs one attempt; raises only LeaseLost or a cancel
GiveUp = Callable[[TurnRequest, str | None], Awaitable[None]]  # tells the thread (in that message, if any) it stops


@dataclass
class _Running:
    owner: str
    task: asyncio.Task[None]


class Consumer:
    """Runs accepted turns, renews their records' leases, and claims the records of dead workers."""

    def __init__(
        self,
        *,
        store: ConversationStore,
        tasks: BackgroundTasks,
        run: Runner,
        give_up: GiveUp,
        claim_every: float = CLAIM_EVERY,
    ) -> None:
        self._store = store
        self._tasks = tasks
        self._run_attempt = run
        self._give_up_in = give_up
        self.name = f"{process_prefix()}{secrets.token_hex(3)}"
        self._renew_every = renew_every(self._store.intake.lease_ms / 1000)  # the one lease rule (bot.store.lease)
        self._claim_every = min(claim_every, self._renew_every)
        self._running: dict[str, _Running] = {}
        self._unmarked: dict[str, str] = {}  # delivery -> owner: answered while Redis was down, not yet marked done
        self._loop: asyncio.Task[None] | None = None
        self._leaving = False

    def start(self) -> None:
        """Start claiming lapsed records and renewing this process's leases; later, when no event loop runs yet."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # build_app outside a loop (a script): the first accept starts it
        if self._loop is None or self._loop.done():
            self._leaving = False
            self._loop = loop.create_task(self._work(), name="folio-consumer")

    async def accept(self, request: TurnRequest, *, new: Conversation | None, reply: bool = False) -> bool:
        """Before the ack: record the delivery durably, take the thread's place in line, make the thread Folio's
        (`new`), and start the turn. False for a repeated delivery; StoreUnavailable when nothing could be recorded
        (then do not ack: Slack delivers it again). `reply`: run only if the thread is Folio's."""
        delivery = request.delivery or f"turn:{secrets.token_hex(8)}"  # /ask, Think harder: their trigger was deduped
        request = replace(request, delivery=delivery)
        owner = f"{self.name}#1"
        lock = await self._store.accept(
            request.thread, delivery=delivery, request=request.to_json(), owner=owner, new=new, reply=reply
        )
        if lock is None:
            log.info("duplicate delivery %s dropped", delivery)
            metrics.duplicate_dropped("message")
            return False
        record = Claimed(delivery=delivery, owner=owner, request="", reply=reply, attempt=1, shown_ts=None)
        if self._leaving:  # stopping: another process runs it
            await lock.leave()
            await self._intake_quietly(self._store.intake.hand_back([(delivery, owner)], counts=False))
            return True
        self._run(record, request, lock)
        return True

    def pause(self) -> None:
        """A stopping process takes on no other worker's turns; its own keep their leases while they drain."""
        self._leaving = True

    async def hand_back(self) -> int:
        """At shutdown: stop claiming, stop this process's unfinished turns (cancelled with "hand-back": they post
        nothing), release their locks and make their records claimable by another process at once, not counted as
        an attempt. Returns how many turns were handed back."""
        self._leaving = True
        await self.stop()
        running = list(self._running.items())
        for _, entry in running:
            entry.task.cancel(HAND_BACK)
        if running:
            await asyncio.wait([entry.task for _, entry in running])
        held = [(delivery, entry.owner) for delivery, entry in running]
        await self._intake_quietly(self._store.intake.hand_back(held, counts=False))
        log.info("handed back %d unfinished turns to the other workers: %s", len(held), [d for d, _ in held])
        return len(held)

    async def stop(self) -> None:
        """Stop claiming and renewing; turns still running go on (Folio drains them) but their leases lapse."""
        loop, self._loop = self._loop, None
        while loop is not None and not loop.done():
            loop.cancel()  # again after a while: redis-py can swallow a cancel that lands mid-command (redis-py#2028)
            await asyncio.wait([loop], timeout=self._claim_every)

    def _run(self, record: Claimed, request: TurnRequest, lock: ThreadLock | None) -> None:
        self.start()
        task = self._tasks.spawn(self._turn(record, request, lock), name=f"turn {request.thread}")
        self._running[record.delivery] = _Running(record.owner, task)

    async def _turn(self, record: Claimed, request: TurnRequest, lock: ThreadLock | None) -> None:
        intake = self._store.intake
        try:
            if await self._attempt(record, request, lock):
                await self._mark_done(record.delivery, record.owner)
        except LeaseLost:  # the thread's lock lapsed under the turn: run it again, updating what it showed
            log.warning("turn %s lost its thread's lease; it runs again", record.delivery)
            await self._intake_quietly(intake.hand_back([(record.delivery, record.owner)], counts=True))
        except StoreUnavailable:  # the record stays; its lease lapses and an attempt runs it (or finds it done)
            log.warning("turn %s stopped: Redis unreachable; it runs again when Redis is back", record.delivery)
        finally:
            self._running.pop(record.delivery, None)

    async def _attempt(self, record: Claimed, request: TurnRequest, lock: ThreadLock | None) -> bool:
        """Run the turn; True once it needs nothing more (answered, told, or not for Folio)."""
        if record.reply and not await self._store.exists(request.thread):
            if lock is not None:
                await lock.leave()
            return True  # a reply in a thread that is not Folio's
        if record.attempt > 1 and await self._answered(request.thread, record.shown_ts):
            log.info("turn %s was answered before its worker stopped; not answered again", record.delivery)
            return True
        if record.attempt > MAX_ATTEMPTS:
            log.error("turn %s failed %d times; telling the thread", record.delivery, record.attempt - 1)
            await self._give_up_in(request, record.shown_ts)
            return True

        noted = {record.shown_ts}

        async def note_shown(ts: str) -> None:
            if ts not in noted:  # the answer usually replaces the message noted already (stream or placeholder)
                noted.add(ts)
                await self._intake_quietly(self._store.intake.note_shown(record.delivery, record.owner, ts))

        await self._run_attempt(request, Attempt(resumed_ts=record.shown_ts, lock=lock, on_shown=note_shown))
        return True

    async def _mark_done(self, delivery: str, owner: str) -> None:
        """Mark the turn done; while Redis is unreachable, keep its lease and try again each look (so that the
        turn, answered already, is not claimed and answered again once Redis is back)."""
        try:
            await self._store.intake.done(delivery, owner)
            self._unmarked.pop(delivery, None)
        except StoreUnavailable:
            log.warning("turn %s is answered but not marked done yet (Redis unreachable); trying again", delivery)
            self._unmarked[delivery] = owner

    async def _answered(self, thread: ThreadKey, shown_ts: str | None) -> bool:
        conversation = await self._store.load(thread)
        return shown_ts is not None and conversation is not None and shown_ts in conversation.message_ts

    async def _work(self) -> None:
        renewed = asyncio.get_running_loop().time()
        while True:
            await asyncio.sleep(self._claim_every)
            try:
                if self._unmarked or asyncio.get_running_loop().time() - renewed >= self._renew_every - 0.01:
                    renewed = asyncio.get_running_loop().time()
                    await self._renew()
                for delivery, owner in list(self._unmarked.items()):
                    await self._mark_done(delivery, owner)
                if not self._leaving:
                    for record in await self._store.intake.claim(self.name, limit=CLAIM_LIMIT):
                        self._resume(record)
            except StoreUnavailable:
                pass  # logged where it happened; the next look tries again

    async def _renew(self) -> None:
        held = [(delivery, entry.owner) for delivery, entry in self._running.items()] + list(self._unmarked.items())
        lost = await self._store.intake.renew(held)
        for delivery in lost & self._unmarked.keys():
            del self._unmarked[delivery]  # claimed meanwhile: that attempt finds the answer saved, or shows it again
        for delivery in lost:
            entry = self._running.get(delivery)
            if entry is not None:
                log.warning("turn %s is another worker's now; stopping it here", delivery)
                entry.task.cancel(LEASE_LOST_CANCEL)

    def _resume(self, record: Claimed) -> None:
        try:
            request = TurnRequest.from_json(record.request)
        except (ValueError, TypeError, KeyError):
            log.exception("intake record %s is unreadable; dropped", record.delivery)
            self._tasks.spawn(
                self._intake_quietly(self._store.intake.done(record.delivery, record.owner)), name="drop unreadable"
            )
            return
        log.info("resuming turn %s (attempt %d) in %s", record.delivery, record.attempt, request.thread)
        self._run(record, request, None)

    @staticmethod
    async def _intake_quietly(work: Awaitable[object]) -> None:
        try:
            await work
        except StoreUnavailable:  # the lease lapses by itself; the record is then claimed again
            log.warning("could not update an intake record; its lease lapses by itself")
