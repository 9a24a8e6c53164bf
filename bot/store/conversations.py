"""Conversations in Redis: one JSON record per Slack thread, plus delivery dedupe and the per-thread lock.

Keys (all under one prefix, default `folio`; a thread's keys in bot.store.keys, under the thread's hash tag):
    {prefix}:conv:{{team}:{channel}:{thread_ts}}  the thread's Conversation as JSON, TTL 30 days refreshed each turn
    {prefix}:resp:{{team}:{channel}:{thread_ts}}  a set of every response id the model returned for the thread,
                                                   added the moment it exists (turns that never finish included)
    {prefix}:seen:{kind}:{id}                      a delivery already handled (event id, message ts, trigger id)
    {prefix}:lock:{{team}:{channel}:{thread_ts}}:*   the thread's lock: queue, holder lease, fence (bot.store.lock)
    {{prefix}:intake}:*                             accepted deliveries until their turn is done (bot.store.intake)

Redis Cluster (issue 23): `load`, `save` (with the lock's release) and `record_remaining` are MULTI/EXEC over one
thread's keys, `add_response` one script on one key, `delete` one DEL of them: one slot (the thread's tag). `accept`
is a plain pipeline over two slots (the thread and the intake): on a single Redis one round trip in order; on a
cluster the thread's part first, then the intake's, since a cluster pipeline sends each node's commands in parallel
and the intake record must come last. `seen` keys are one key per command. On a single Redis, a thread's keys of
older Folios (no hash tag) are adopted on first touch (bot.store.keys.ADOPT). `accept`, the one round trip before
Slack's ack, goes through a blocking client when given one (a single Redis): see `_accept_blocking`.

Every Redis error leaves this module as StoreUnavailable.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import ValidationError
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from bot import messages
from bot.errors import StoreUnavailable
from bot.models import Conversation, Feedback
from bot.store import keys
from bot.store.errors import redis_errors
from bot.store.failures import REDIS_FAILURES
from bot.store.intake import Intake
from bot.store.keys import ThreadKey
from bot.store.lock import LEASE_SECONDS, ThreadLock
from bot.store.probe import needs_cluster_client
from bot.store.scripts import AnyPipeline, Script
from bot.store.watch import Outbox, cite_in, threads_citing, uncite_in

if TYPE_CHECKING:
    from redis import Redis as SyncRedis

log = logging.getLogger(__name__)

BLOCKING_PAUSE = 30.0  # seconds `accept` awaits Redis after its blocking client failed or was slow
SLOW_ACCEPT = 0.02  # a blocking round trip longer than this is no nearby Redis: holding the loop would cost the turns
THIRTY_DAYS = 30 * 24 * 3600  # the model provider keeps stored responses 30 days; a longer record could not chain
_SEEN_TTL = 24 * 3600  # Slack retries an event for minutes at most; a day is ample


# KEYS responses; ARGV response id, ttl_s. One command a response id, atomic: no set is left without its expiry.
_ADD_RESPONSE = Script("""
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
""")


class ConversationStore:
    """The only way Folio reads and writes conversation state."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        *,
        prefix: str = "folio",
        ttl_seconds: int = THIRTY_DAYS,
        lock_hold_seconds: float = 180.0,
        lock_lease_seconds: float = LEASE_SECONDS,
        on_close: Callable[[], None] | None = None,
        blocking: SyncRedis | None = None,
    ) -> None:
        self._redis = redis
        self._blocking = blocking  # the same Redis through a blocking client: `accept`'s one round trip (see there)
        self._blocking_paused_until = 0.0
        self.cluster = isinstance(redis, RedisCluster)  # no keys of older Folios there: they could not use one
        self._plain_checked = False  # ping() found this plain client's server no cluster node
        self._prefix = prefix
        self._ttl = ttl_seconds
        self._lock_hold = lock_hold_seconds  # the longest a turn holds its thread: waiters wait three times that
        self._lock_lease = lock_lease_seconds
        self._on_close = on_close
        self.intake = Intake(redis, prefix=prefix, lease_seconds=lock_lease_seconds)

    def _key(self, thread: ThreadKey) -> str:
        return keys.thread_keys(self._prefix, thread).conversation

    def _responses_key(self, thread: ThreadKey) -> str:
        return keys.thread_keys(self._prefix, thread).responses

    def _adopt_in(self, pipe: AnyPipeline, thread: ThreadKey) -> None:
        """On a single Redis, rename the thread's keys of an older Folio first (bot.store.keys)."""
        if not self.cluster:
            keys.ADOPT.queue(pipe, keys.adopt_keys(self._prefix, thread), (self._ttl,))

    async def load(self, thread: ThreadKey) -> Conversation | None:
        """The thread's conversation, or None when Folio has none (never answered, deleted or expired). Its
        `response_ids` include those of turns that never finished (see `add_response`)."""
        async with redis_errors():
            async with self._redis.pipeline(transaction=True) as pipe:
                self._adopt_in(pipe, thread)
                pipe.get(self._key(thread))
                # not pipe.smembers: redis-py's cluster MULTI hands SMEMBERS' reply parser a `keys` it does not take
                pipe.execute_command("SMEMBERS", self._responses_key(thread))
                *_, raw, unfinished = await pipe.execute()
        if raw is None:
            return None
        try:
            conversation = Conversation.model_validate_json(raw)
        except ValidationError:
            log.warning("conversation %s is unreadable; starting afresh", thread, exc_info=True)
            return None
        known = set(conversation.response_ids)
        conversation.response_ids.extend(sorted(rid for rid in map(_text, unfinished) if rid not in known))
        return conversation

    async def add_response(self, thread: ThreadKey, response_id: str) -> None:
        """Record a response the model just created for this thread, in one atomic step: no read-modify-write, so it
        never races the conversation record, and deletion reaches it whatever becomes of the turn."""
        async with redis_errors():  # one script, not MULTI/SADD/EXPIRE/EXEC: a turn records three of these
            await _ADD_RESPONSE(self._redis, (self._responses_key(thread),), (response_id, self._ttl))

    async def exists(self, thread: ThreadKey) -> bool:
        """Whether Folio holds a conversation for this thread (a cheap check for every threaded message)."""
        async with redis_errors():
            if self.cluster:
                return bool(await self._redis.exists(self._key(thread)))
            async with self._redis.pipeline(transaction=True) as pipe:
                self._adopt_in(pipe, thread)
                pipe.exists(self._key(thread))
                return bool((await pipe.execute())[-1])

    async def save(self, thread: ThreadKey, conversation: Conversation, *, release: object = None) -> None:
        """Write the conversation and restart its 30-day expiry (and its response ids'). `release`: the thread's lock
        this turn holds, released in the same transaction (one round trip, not two; its keys are in the thread's
        slot); when the save fails, the lock is still held and its `async with` releases it as ever."""
        lock = release if isinstance(release, ThreadLock) and release.fence else None
        if lock is not None:
            await lock.stop_renewing()  # a renewal after the release would take the hold back
        cited = cited_documents(conversation)
        async with redis_errors():
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.set(self._key(thread), conversation.model_dump_json(), ex=self._ttl)
                pipe.expire(self._responses_key(thread), self._ttl)
                if not self.cluster:  # the documents' sets are other slots: in this MULTI on a single Redis only
                    cite_in(pipe, self._prefix, thread, cited, now=time.time(), ttl=self._ttl)
                if lock is not None:
                    lock.release_in(pipe)
                await pipe.execute()
            if self.cluster and cited:  # right after, each node's part at once (a lost write: no note, no harm)
                async with self._redis.pipeline(transaction=False) as pipe:
                    cite_in(pipe, self._prefix, thread, cited, now=time.time(), ttl=self._ttl)
                    await pipe.execute()
        if lock is not None:
            lock.released()

    async def delete(self, thread: ThreadKey) -> None:
        """Forget the thread (its turn traces too: they may quote it)."""
        forms = [keys.thread_keys(self._prefix, thread)] + ([] if self.cluster else [keys.legacy(self._prefix, thread)])
        conversation = await self.load(thread)
        if conversation is not None and (cited := cited_documents(conversation)):
            async with redis_errors(), self._redis.pipeline(transaction=False) as pipe:
                uncite_in(pipe, self._prefix, thread, cited)  # the watch no longer finds it
                await pipe.execute()
        async with redis_errors():
            for form in forms:  # one DEL per form: each is one slot
                await self._redis.delete(form.conversation, form.responses, form.traces)

    async def set_feedback(self, thread: ThreadKey, turn_index: int, feedback: Feedback) -> bool:
        """Store a helpful / not helpful vote on one turn; False when the turn is gone. Hold the thread lock."""
        conversation = await self.load(thread)
        if conversation is None or not 0 <= turn_index < len(conversation.turns):
            return False
        turn = conversation.turns[turn_index]
        conversation.turns[turn_index] = turn.model_copy(update={"feedback": feedback})
        await self._keep_ttl_save(thread, conversation)
        return True

    async def record_remaining(
        self, thread: ThreadKey, conversation: Conversation, *, response_ids: Sequence[str], message_ts: Sequence[str]
    ) -> None:
        """After a half-finished deletion, keep only what is still to delete, so the next attempt resumes there."""
        conversation.response_ids = list(response_ids)
        conversation.message_ts = list(message_ts)
        async with redis_errors():
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.set(self._key(thread), conversation.model_dump_json(), keepttl=True)
                pipe.delete(self._responses_key(thread))  # what is left is in the record now
                await pipe.execute()

    async def remember_message(self, thread: ThreadKey, ts: str) -> None:
        """Record one more of Folio's messages in the thread, for deletion; nothing when the thread has no record."""
        conversation = await self.load(thread)
        if conversation is not None and ts not in conversation.message_ts:
            conversation.message_ts.append(ts)
            await self._keep_ttl_save(thread, conversation)

    async def _keep_ttl_save(self, thread: ThreadKey, conversation: Conversation) -> None:
        async with redis_errors():
            await self._redis.set(self._key(thread), conversation.model_dump_json(), keepttl=True)

    async def first_delivery(self, kind: str, ident: str, *, ttl_seconds: int = _SEEN_TTL) -> bool:
        """True the first time `kind:ident` is seen, False for every later delivery of the same thing."""
        async with redis_errors():
            created = await self._redis.set(self._seen_key(kind, ident), "1", nx=True, ex=ttl_seconds)
        return bool(created)

    def _seen_key(self, kind: str, ident: str) -> str:
        return f"{self._prefix}:seen:{kind}:{ident}"

    async def accept(
        self, thread: ThreadKey, *, delivery: str, request: str, owner: str, new: Conversation | None, reply: bool
    ) -> ThreadLock | None:
        """Before the ack, in one round trip: take the thread's place in line (and the hold, when the thread is
        idle), make the thread Folio's (`new` is saved unless the thread already has a conversation), and record the
        delivery in the intake unless it was seen before (None then: a repeated delivery: its place let go).
        StoreUnavailable when the record may not be written: do not ack then, so that Slack delivers it again.

        Saving `new` here, before the turn runs, is what lets a reply sent while the first answer is still being
        written continue the conversation: `exists()` is true from the moment Folio takes the thread on. `reply`:
        the turn runs only if the thread turns out to be Folio's (a plain reply in a thread).
        """
        lock = self.lock(thread)
        accept_id = secrets.token_hex(8)

        def thread_part(pipe: AnyPipeline) -> None:
            self._adopt_in(pipe, thread)  # before SET NX: an older Folio's conversation is the thread's
            lock.enqueue_in(pipe)
            if new is not None:
                pipe.set(self._key(thread), new.model_dump_json(), nx=True, ex=self._ttl)
            lock.try_acquire_in(pipe)  # an idle thread's turn holds it from here: no round trip of its own

        def intake_part(pipe: AnyPipeline) -> None:
            self.intake.accept_in(pipe, delivery, request, owner=owner, accept_id=accept_id, reply=reply)

        # Not a transaction: the thread's keys and the intake's are in different hash slots. The intake record goes
        # last, so that once it exists everything before it was written too: on a cluster, whose pipeline sends to
        # each node at once, in a second round trip.
        async with redis_errors():
            if self._blocking is not None and time.monotonic() >= self._blocking_paused_until:
                replies = self._accept_blocking(thread_part, intake_part)
            else:
                async with self._redis.pipeline(transaction=False) as pipe:
                    thread_part(pipe)
                    replies = await pipe.execute() if self.cluster else []
                    intake_part(pipe)
                    replies += await pipe.execute()
        *thread_replies, recorded = replies
        lock.tried(thread_replies[-1])
        if not recorded:
            await lock.leave()  # the same message again (a Slack retry): its first delivery has the place in line
            return None
        return lock

    def _accept_blocking(self, *parts: Callable[[AnyPipeline], None]) -> list[object]:
        """`accept`'s round trip, holding the event loop meanwhile (a local Redis answers in well under a
        millisecond). Awaited, redis-py's pipeline takes the loop round six or seven times, and with 30 turns
        running each round waits for every turn's next step: so did Slack's ack (benchmarks/RESULTS.md, issue 21
        item 2). After a failure `accept` awaits for BLOCKING_PAUSE seconds, so that a Redis that does not answer
        holds the loop once (the client's timeout), not once a message; after a round trip past SLOW_ACCEPT too, so
        that a distant or overloaded Redis holds the loop once every BLOCKING_PAUSE, not for every message."""
        assert self._blocking is not None
        started = time.monotonic()
        try:
            with self._blocking.pipeline(transaction=False) as pipe:
                for part in parts:  # one round trip: a single Redis (no blocking client is made for a cluster)
                    part(pipe)  # type: ignore[arg-type]  # a blocking pipeline queues as the asyncio one does
                replies = list(pipe.execute())
        except REDIS_FAILURES:
            self._blocking_paused_until = time.monotonic() + BLOCKING_PAUSE
            raise
        if time.monotonic() - started > SLOW_ACCEPT:
            self._blocking_paused_until = time.monotonic() + BLOCKING_PAUSE
        return replies

    def lock(self, thread: ThreadKey, *, wait_seconds: float | None = None) -> ThreadLock:
        """The thread's lock: turns run one at a time in the order they called `enqueue()`; its keys share the
        thread's hash tag (one Cluster slot)."""
        return ThreadLock(
            self._redis,
            f"{self._prefix}:lock:{{{thread}}}",
            lease_seconds=self._lock_lease,
            wait_seconds=wait_seconds if wait_seconds is not None else 3 * self._lock_hold,
        )

    async def threads_citing(
        self, documents: Sequence[tuple[str, str]], *, since: float
    ) -> dict[tuple[str, str], list[ThreadKey]]:
        """Per (container, document), the threads whose answers cited it and that answered since `since`."""
        return await threads_citing(self._redis, self._prefix, documents, since=since)

    def outbox(self) -> Outbox:
        """The watch's notes still to post (bot.store.watch)."""
        return Outbox(self._redis, prefix=self._prefix)

    def keyspace(self, name: str) -> tuple[Redis | RedisCluster, str]:
        """The connection and a key prefix for another kind of Folio state in the same Redis (e.g. `access`)."""
        return self._redis, f"{self._prefix}:{name}"

    async def ping(self) -> None:
        """Raise StoreUnavailable unless Redis answers, and is the kind of Redis the client is for (a plain client on
        a cluster node answers PING, and then MOVED for most keys), and a cluster serves every slot."""
        async with redis_errors():
            await self._redis.ping()
            if isinstance(self._redis, RedisCluster):  # a node answers PING while the cluster refuses keys: ask
                state = str((await self._redis.cluster_info()).get("cluster_state"))
                if state != "ok":
                    raise StoreUnavailable(messages.redis_cluster_down(f"cluster_state:{state}"))
            elif not self._plain_checked:
                if await needs_cluster_client(self._redis):
                    raise StoreUnavailable(messages.REDIS_IS_A_CLUSTER)
                self._plain_checked = True

    async def close(self) -> None:
        """Close the connection (and stop the embedded Redis, when this store started one)."""
        await self._redis.aclose()
        if self._blocking is not None:
            self._blocking.close()
        if self._on_close is not None:
            self._on_close()


def cited_documents(conversation: Conversation) -> list[tuple[str, str]]:
    """The (container, document) pairs the conversation's kept answers cited, in the order first cited."""
    pairs = (
        (citation.container, citation.file)
        for turn in conversation.turns
        if not turn.set_aside
        for citation in turn.citations
    )
    return list(dict.fromkeys(pairs))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
