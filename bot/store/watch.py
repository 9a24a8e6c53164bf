"""What the watch keeps in Redis: which threads cited which document, and the notes still to post.

    {prefix}:cited:{{container:document}}   sorted set: thread ("team:channel:thread_ts") -> when it last saved an
                                            answer (epoch seconds); one key a document, its own hash slot
    {{prefix}:watch}:notes                  hash: note id -> the note (JSON), until it is posted
    {{prefix}:watch}:due                    sorted set: note id -> when it may be claimed (now, or a lease's end)
    {{prefix}:watch}:tries                  hash: note id -> how many times it was claimed
    {{prefix}:watch}:posted                 sorted set: note id -> when it was posted (30 days): never queued again
    {{prefix}:watch}:sent:{id}              string: a posted note's thread and trigger (JSON, without its text), 30
                                            days: what its "Answer again" button names (the button carries only
                                            the id; the change is read here)
    {{prefix}:watch}:runs                   list: the last RUNS_KEPT runs (JSON), newest first, for `folio watch`

The cited sets are written with the conversation's save (`cite_in`: in its MULTI on a single Redis; beside it on a
cluster, whose transactions cannot span slots). A member's score is the thread's last answer, so `threads` reads
only those active since a time (one ZRANGEBYSCORE a document: a lookup, not a scan), members older than the
conversation's own life (30 days) are pruned at each write, and each set expires 30 days after its last write.
Deleting a conversation removes its members (`uncite_in`).

The outbox's keys share one hash tag, so each script below is one slot. A note is claimed with a lease (its `due`
score moves to the lease's end), so a poster that dies between claiming and marking it posted leaves it to the next
poster once the lease ends; that poster looks for it in the thread first (`tries` > 1), so it is never posted twice.
A poster renews its lease while it posts (`renew`, fenced by its `tries`), so a slow post is not taken over.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline, RedisCluster

from bot.store.errors import redis_errors
from bot.store.keys import ThreadKey
from bot.store.scripts import Script

POSTED_KEPT = 30 * 24 * 3600  # a note posted is remembered as long as a conversation lives: never queued again
RUNS_KEPT = 100
NOTE_ID = re.compile(r"[0-9a-f]{24}")  # what `bot.turns.watch.note_id` makes: anything else names no note


def cited_key(prefix: str, container: str, document: str) -> str:
    """The set of threads that cited `document` of `container` (its own hash slot)."""
    return f"{prefix}:cited:{{{container}:{document}}}"


def cite_in(
    pipe: Pipeline | ClusterPipeline,
    prefix: str,
    thread: ThreadKey,
    documents: Iterable[tuple[str, str]],
    *,
    now: float,
    ttl: int,
) -> None:
    """Queue: `thread` cited these (container, document) pairs as of `now`; members past `ttl` are pruned."""
    for container, document in documents:
        key = cited_key(prefix, container, document)
        pipe.zadd(key, {str(thread): now})
        pipe.zremrangebyscore(key, "-inf", now - ttl)
        pipe.expire(key, ttl)


def uncite_in(
    pipe: Pipeline | ClusterPipeline, prefix: str, thread: ThreadKey, documents: Iterable[tuple[str, str]]
) -> None:
    """Queue: `thread` no longer cites these (its conversation is deleted)."""
    for container, document in documents:
        pipe.zrem(cited_key(prefix, container, document), str(thread))


async def threads_citing(
    redis: Redis | RedisCluster, prefix: str, documents: Sequence[tuple[str, str]], *, since: float
) -> dict[tuple[str, str], list[ThreadKey]]:
    """Per document, the threads that cited it and saved an answer since `since`: one read a document."""
    async with redis_errors():
        async with redis.pipeline(transaction=False) as pipe:
            for container, document in documents:
                pipe.zrangebyscore(cited_key(prefix, container, document), since, "+inf")
            replies = await pipe.execute()
    return {doc: [_thread(member) for member in members] for doc, members in zip(documents, replies, strict=True)}


def _thread(member: bytes | str) -> ThreadKey:
    text = member.decode() if isinstance(member, bytes) else member
    team, channel, thread_ts = text.split(":", 2)
    return ThreadKey(team=team, channel=channel, thread_ts=thread_ts)


class Note(BaseModel):
    """One note to post in a thread: what its answer relied on that changed or went."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    team: str
    channel: str
    thread_ts: str
    text: str  # mrkdwn, the whole note (also the notification text)
    trigger: str = ""  # which change found it ("benefits/refund_policy.pdf changed on 2 Dec"), for the trace

    @property
    def thread(self) -> ThreadKey:
        return ThreadKey(team=self.team, channel=self.channel, thread_ts=self.thread_ts)


class WatchRecord(BaseModel):
    """One run of the watch as `folio watch` lists it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    at: float  # epoch seconds
    documents: int  # changed or removed
    threads: int  # checked
    notes: int  # found and queued
    posted: int  # posted by this run (notes of earlier runs included)


@dataclass(frozen=True)
class Claimed:
    """A note a poster holds until its lease ends; `tries` > 1: an earlier poster may have posted it."""

    note: Note
    tries: int


# KEYS notes, due, posted; ARGV id, json, now. A note already queued or posted is not queued again.
_ENQUEUE = Script("""
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('ZSCORE', KEYS[3], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
""")

# KEYS notes, due, tries; ARGV now, lease. The first note due: its lease starts, its tries go up.
_CLAIM = Script("""
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #due == 0 then return false end
local id = due[1]
local note = redis.call('HGET', KEYS[1], id)
if not note then redis.call('ZREM', KEYS[2], id) return false end
redis.call('ZADD', KEYS[2], tonumber(ARGV[1]) + tonumber(ARGV[2]), id)
return {note, redis.call('HINCRBY', KEYS[3], id, 1)}
""")

# KEYS notes, due, tries; ARGV id, tries, until. The lease of a note still held by this claim (its `tries`) lasts
# until `until`; 0 when another poster took it since (this one's lease had lapsed) or it is done.
_RENEW = Script("""
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] or not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
""")

# KEYS notes, due, tries, posted, sent; ARGV id, now, kept, what its button names. Posted (or found posted): gone
# from the queue, remembered, and its thread and trigger kept for its button.
_DONE = Script("""
redis.call('SET', KEYS[5], ARGV[4], 'EX', ARGV[3])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
return 1
""")


class Outbox:
    """Notes found and not yet posted: durable, claimed under a lease, posted once."""

    def __init__(self, redis: Redis | RedisCluster, *, prefix: str) -> None:
        self._redis = redis
        self._tag = tag = f"{{{prefix}:watch}}"
        self._notes, self._due, self._tries, self._posted, self._runs = (
            f"{tag}:{name}" for name in ("notes", "due", "tries", "posted", "runs")
        )

    async def add(self, note: Note) -> bool:
        """Queue `note`; False when it is queued or was posted already (the same finding again)."""
        async with redis_errors():
            added = await _ENQUEUE(
                self._redis, (self._notes, self._due, self._posted), (note.id, note.model_dump_json(), time.time())
            )
        return bool(added)

    async def claim(self, *, lease: float) -> Claimed | None:
        """The next note due, held for `lease` seconds; None when none is."""
        async with redis_errors():
            found = await _CLAIM(self._redis, (self._notes, self._due, self._tries), (time.time(), lease))
        if not found:
            return None
        raw, tries = found
        return Claimed(note=Note.model_validate_json(raw), tries=int(tries))

    async def renew(self, claimed: Claimed, *, lease: float) -> bool:
        """Hold `claimed` `lease` seconds more; False when it is no longer this claim's (taken over, or done)."""
        keys = (self._notes, self._due, self._tries)
        async with redis_errors():
            return bool(await _RENEW(self._redis, keys, (claimed.note.id, claimed.tries, time.time() + lease)))

    async def posted(self, note: Note) -> None:
        """`note` is in its thread: never post it again; its thread and trigger are kept POSTED_KEPT for its button
        (not its text, which quotes a document: the thread's deletion cannot reach this key)."""
        keys = (self._notes, self._due, self._tries, self._posted, self._sent(note.id))
        named = note.model_copy(update={"text": ""}).model_dump_json()
        async with redis_errors():
            await _DONE(self._redis, keys, (note.id, time.time(), POSTED_KEPT, named))

    async def sent(self, note_id: str) -> Note | None:
        """The posted note `note_id` names (as its button does), or None: no such note, or posted more than
        POSTED_KEPT ago. `note_id` comes from a click: only an id of the shape Folio makes is looked up."""
        if not NOTE_ID.fullmatch(note_id):
            return None
        async with redis_errors():
            raw = await self._redis.get(self._sent(note_id))
        return None if raw is None else Note.model_validate_json(raw)

    def _sent(self, note_id: str) -> str:
        return f"{self._tag}:sent:{note_id}"

    async def pending(self) -> int:
        """How many notes wait to be posted (claimed ones included)."""
        async with redis_errors():
            return int(await self._redis.hlen(self._notes))

    async def record(self, run: WatchRecord) -> None:
        """Keep one run's figures (the last RUNS_KEPT)."""
        async with redis_errors():
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.lpush(self._runs, run.model_dump_json())
                pipe.ltrim(self._runs, 0, RUNS_KEPT - 1)
                await pipe.execute()

    async def runs(self, *, last: int = 20) -> list[WatchRecord]:
        """The last runs, newest first."""
        async with redis_errors():
            raw = await self._redis.lrange(self._runs, 0, last - 1)
        return [WatchRecord.model_validate_json(item) for item in raw]
