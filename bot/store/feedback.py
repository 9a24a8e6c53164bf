"""Feedback on answers, kept with what was answered, for an admin to review (`folio feedback`) and turn into golden
lines (`folio feedback export`). In the store's Redis, for the retention period of conversations:

    {prefix}:{team}:{channel}:{thread_ts}:{turn}:{user}   one person's last click on one answer (JSON)
    {prefix}:index                                       those keys, scored by the time of the click

Last click wins: a person's 👎 after their 👍 on the same answer replaces it (Slack shows one state per person).

Redis Cluster (issue 23): a record and the index are in different slots, so nothing here is a transaction or a
multi-key command: `save` is a plain pipeline (a record whose index entry was lost to a crash in between is still
deleted with its thread, which finds records by SCAN, not by the index), reads and deletions one key per command.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import cast

from bot.models import Citation, Conversation, Feedback
from bot.store.conversations import THIRTY_DAYS, ThreadKey, redis_errors
from bot.store.scripts import AnyRedis

REASONS = ("wrong", "outdated", "source", "other")  # what the 👎 form offers (bot.messages names them)


@dataclass(frozen=True)
class FeedbackRecord:
    """One person's verdict on one answer, with the answer as it was shown."""

    at: str  # ISO 8601, UTC
    team: str
    channel: str
    thread_ts: str
    turn: int
    user: str
    rating: Feedback
    question: str
    answer: str
    citations: tuple[dict[str, object], ...] = ()  # file, page, title, container, url
    containers: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    profile: str = "fast"
    reason: str | None = None  # one of REASONS, from the 👎 form
    comment: str | None = None  # the form's free text

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, raw: str | bytes) -> FeedbackRecord:
        data = json.loads(raw)
        data["citations"] = tuple(data.get("citations") or ())
        data["containers"], data["tags"] = tuple(data.get("containers") or ()), tuple(data.get("tags") or ())
        return cls(**data)

    @property
    def pages(self) -> tuple[str, ...]:
        """The cited pages as `file#page=N`, in citation order."""
        cited = (f"{c['file']}#page={c['page']}" for c in self.citations if c.get("page") is not None)
        return tuple(dict.fromkeys(cited))


def record_of(
    conversation: Conversation, thread: ThreadKey, turn: int, *, user: str, rating: Feedback, at: datetime
) -> FeedbackRecord:
    """The record of `user`'s click on answer `turn` of the conversation (the turn must exist)."""
    shown = conversation.turns[turn]
    scope = conversation.scope
    return FeedbackRecord(
        at=at.astimezone(UTC).isoformat(timespec="seconds"),
        team=thread.team,
        channel=thread.channel,
        thread_ts=thread.thread_ts,
        turn=turn,
        user=user,
        rating=rating,
        question=shown.question,
        answer=shown.answer,
        citations=tuple(_citation(c) for c in shown.citations),
        containers=tuple(scope.containers),
        tags=tuple(str(tag) for tag in scope.tags),
        profile=shown.profile,
    )


def _citation(citation: Citation) -> dict[str, object]:
    return {
        "file": citation.file,
        "page": citation.page,
        "title": citation.title,
        "container": citation.container,
        "url": citation.url,
    }


class FeedbackStore:
    """Feedback records in Redis, kept `ttl` seconds (the conversations' retention)."""

    def __init__(
        self, redis: AnyRedis, prefix: str, *, ttl: int = THIRTY_DAYS, clock: Callable[[], float] = time.time
    ) -> None:
        self._redis, self._prefix, self._ttl, self._clock = redis, prefix, ttl, clock

    async def save(self, record: FeedbackRecord) -> None:
        """Keep `record`, replacing the same person's earlier click on the same answer."""
        key = self._key(record)
        async with redis_errors():
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.set(key, record.to_json(), ex=self._ttl)
                pipe.zadd(self._index, {key: self._clock()})
                pipe.zremrangebyscore(self._index, "-inf", self._clock() - self._ttl)
                await pipe.execute()

    async def get(self, thread: ThreadKey, turn: int, user: str) -> FeedbackRecord | None:
        async with redis_errors():
            raw = await self._redis.get(f"{self._thread_prefix(thread)}:{turn}:{user}")
        return FeedbackRecord.from_json(raw) if raw is not None else None

    async def explain(self, thread: ThreadKey, turn: int, user: str, *, reason: str, comment: str | None) -> bool:
        """Add the 👎 form's reason to the person's record of that answer; False when there is none (expired)."""
        record = await self.get(thread, turn, user)
        if record is None:
            return False
        await self.save(replace(record, rating="not_helpful", reason=reason, comment=comment or None))
        return True

    async def forget_thread(self, thread: ThreadKey) -> None:
        """The conversation was deleted: its feedback (which quotes it) goes too."""
        pattern = f"{self._thread_prefix(thread)}:*"
        async with redis_errors():
            keys = [key async for key in self._redis.scan_iter(match=pattern, count=500)]
            if keys:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for key in keys:
                        pipe.delete(key)
                    pipe.zrem(self._index, *keys)
                    await pipe.execute()

    async def since(self, at: float = 0.0) -> list[FeedbackRecord]:
        """Every record clicked at or after `at` (epoch seconds), oldest first."""
        async with redis_errors():
            keys = cast(list[bytes], await self._redis.zrangebyscore(self._index, at, "+inf"))  # no scores asked
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.get(key)
                raws = await pipe.execute() if keys else []
        return [FeedbackRecord.from_json(raw) for raw in raws if raw is not None]

    @property
    def _index(self) -> str:
        return f"{self._prefix}:index"

    def _thread_prefix(self, thread: ThreadKey) -> str:
        return f"{self._prefix}:{thread.team}:{thread.channel}:{thread.thread_ts}"

    def _key(self, record: FeedbackRecord) -> str:
        return f"{self._prefix}:{record.team}:{record.channel}:{record.thread_ts}:{record.turn}:{record.user}"
