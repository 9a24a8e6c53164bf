"""The load the bench drives: N Slack threads, each asking its next question as soon as the last is answered.

Every event is a signed POST to Folio's /slack/events, shaped as Slack sends it: an @mention arrives as both an
`app_mention` and a `message` event (Folio must answer once), and a follow-up is a plain reply in the thread.
Answers are seen by the fake Slack, which records when each answer message first appears (`answers_url`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from slack_sdk.signature import SignatureVerifier

TEAM = "T0FOLIO01"
BOT_USER = "UFOLIOBOT"  # the fake Slack's bot user (auth.test)
CHANNEL = "CBENCH0001"
POLL_SECONDS = 0.02
PROGRESS_SECONDS = 2.0


@dataclass(frozen=True, kw_only=True)
class Target:
    events_url: str  # Folio's POST /slack/events
    answers_url: str  # the fake Slack's record of answer messages
    signing_secret: str


@dataclass(frozen=True)
class TurnTiming:
    thread: str
    sent_at: float  # wall clock (time.time()), as the fake Slack's `at`
    answered_at: float | None = None
    error: str | None = None
    first_step_at: float | None = None  # the turn's first visible progress: a status, placeholder or task card
    first_search_at: float | None = None  # its first visible "Searching: ..."
    first_text_at: float | None = None  # its answer's first visible text (the answer itself when not streamed)
    first_token_at: float | None = None  # when the fake model wrote the answer's first token


@dataclass
class LoadResult:
    """Everything measured while driving the load."""

    started_at: float
    ended_at: float = 0.0
    acks: list[float] = field(default_factory=list)  # seconds per event POST
    ack_failures: list[str] = field(default_factory=list)
    turns: list[TurnTiming] = field(default_factory=list)
    answers_by_thread: dict[str, int] = field(default_factory=dict)
    asked_by_thread: dict[str, int] = field(default_factory=dict)
    model_calls: int = 0  # create requests the fake model answered
    slack_calls: dict[str, int] = field(default_factory=dict)  # Web API calls Folio made, by method
    stream_text: dict[str, int] = field(default_factory=dict)  # appendStream calls, those with text, their chars
    generation_s: float = 0.0  # seconds the fake model spent writing answer tokens (--token-delay), all turns

    @property
    def events(self) -> int:
        return len(self.acks) + len(self.ack_failures)

    @property
    def duplicate_answers(self) -> int:
        asked = self.asked_by_thread
        return sum(max(0, count - asked.get(thread, 0)) for thread, count in self.answers_by_thread.items())


def event_body(event: dict[str, Any], *, event_id: str) -> bytes:
    """An Events API envelope around one event, as Slack posts it."""
    envelope = {
        "token": "bench",
        "team_id": TEAM,
        "api_app_id": "ABENCH0001",
        "type": "event_callback",
        "event": event,
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True, "is_enterprise_install": False}],
    }
    return json.dumps(envelope).encode()


def signed_headers(secret: str, body: bytes, *, now: float | None = None) -> dict[str, str]:
    """Slack's request signature headers for `body` (v0 HMAC-SHA256 of `v0:timestamp:body`)."""
    timestamp = str(int(time.time() if now is None else now))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    return {
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": signature or "",
        "Content-Type": "application/json",
    }


def question_events(
    question: str, *, ts: str, thread_ts: str | None, user: str, mention: bool = True
) -> list[dict[str, Any]]:
    """The events of one question: an @mention (app_mention + message, as Slack sends both), or a plain reply."""
    base = {"user": user, "ts": ts, "channel": CHANNEL, "event_ts": ts, "team": TEAM}
    if thread_ts is not None:
        base["thread_ts"] = thread_ts
    if not mention:
        return [{"type": "message", "channel_type": "channel", "text": question, **base}]
    text = f"<@{BOT_USER}> {question}"
    return [
        {"type": "app_mention", "text": text, **base},
        {"type": "message", "channel_type": "channel", "text": text, **base},
    ]


class _Answers:
    """Polls the fake Slack's answer record and wakes the thread waiting for each answer."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url
        self.seen = 0
        self.count: dict[str, int] = defaultdict(int)
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def expect(self, thread_ts: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[thread_ts] = future
        return future

    async def poll_forever(self) -> None:
        while True:
            await self.poll()
            await asyncio.sleep(POLL_SECONDS)

    async def poll(self) -> None:
        async with self.session.get(self.url, params={"since": str(self.seen)}) as response:
            records = await response.json()
        self.seen += len(records)
        for record in records:
            if record["answer"]:
                self.count[record["thread_ts"]] += 1
            future = self.waiting.pop(record["thread_ts"], None)
            if future is not None and not future.done():
                future.set_result(record)


async def drive(
    target: Target,
    *,
    threads: int,
    duration: float,
    questions: Sequence[str],
    turn_timeout: float = 30.0,
    mention: bool = False,
    progress: Callable[[LoadResult], None] | None = None,
) -> LoadResult:
    """Run `threads` conversations for `duration` seconds (new questions stop then; answers are awaited).

    A thread's first question @mentions Folio; its follow-ups are plain replies, or @mentions with `mention`.
    `progress` is called with the figures so far every PROGRESS_SECONDS while the load runs.
    """
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        answers = _Answers(session, target.answers_url)
        result = LoadResult(started_at=time.time())
        poller = asyncio.create_task(answers.poll_forever())
        reporter = asyncio.create_task(_report_progress(result, progress)) if progress else None
        stamps = itertools.count(1)
        base = int(time.time())
        deadline = time.monotonic() + duration
        ramp = min(2.0, duration / 5)  # start threads over the first seconds, not in one burst

        async def conversation(number: int) -> None:
            await asyncio.sleep(ramp * number / threads)
            root: str | None = None
            for turn in itertools.count():
                if time.monotonic() >= deadline:
                    return
                ts = f"{base}.{next(stamps):06d}"
                thread = root or ts
                question = questions[(number + turn) % len(questions)]
                user = f"UBENCH{number:05d}"
                events = question_events(question, ts=ts, thread_ts=root, user=user, mention=mention or root is None)
                timing = await _ask(session, target, answers, result, events, thread=thread, timeout=turn_timeout)
                result.turns.append(timing)
                result.asked_by_thread[thread] = result.asked_by_thread.get(thread, 0) + 1
                root = thread

        try:
            await asyncio.gather(*(conversation(n) for n in range(threads)))
            await asyncio.sleep(1.0)  # late duplicates still count
            await answers.poll()
        finally:
            poller.cancel()
            if reporter is not None:
                reporter.cancel()
        result.ended_at = time.time()
        result.answers_by_thread = dict(answers.count)
        async with session.get(target.answers_url.rsplit("/", 1)[0] + "/stats") as response:
            stats = await response.json()
        result.model_calls, result.slack_calls = stats["model_calls"], stats["slack_calls"]
        result.stream_text = stats.get("stream_text", {})
        result.generation_s = stats.get("generation_s", 0.0)
        return result


async def _report_progress(result: LoadResult, progress: Callable[[LoadResult], None]) -> None:
    while True:
        await asyncio.sleep(PROGRESS_SECONDS)
        progress(result)


async def _ask(
    session: aiohttp.ClientSession,
    target: Target,
    answers: _Answers,
    result: LoadResult,
    events: list[dict[str, Any]],
    *,
    thread: str,
    timeout: float,
) -> TurnTiming:
    """Post one question's events at once and wait for the thread's answer (or failure message)."""
    waiter = answers.expect(thread)
    sent = time.time()
    await asyncio.gather(*(_post(session, target, result, event, n) for n, event in enumerate(events)))
    try:
        record = await asyncio.wait_for(waiter, timeout)
    except TimeoutError:
        return TurnTiming(thread, sent, error=f"no answer within {timeout:.0f} s")
    if not record["answer"]:
        return TurnTiming(thread, sent, record["at"], error=f"failure message: {record['text'][:80]}")
    return TurnTiming(
        thread,
        sent,
        record["at"],
        first_step_at=record.get("first_step"),
        first_search_at=record.get("first_search"),
        first_text_at=record.get("first_text"),
        first_token_at=record.get("first_token"),
    )


async def _post(session: aiohttp.ClientSession, target: Target, result: LoadResult, event: dict, n: int) -> None:
    body = event_body(event, event_id=f"Ev{event['ts'].replace('.', '')}{n}")
    started = time.perf_counter()
    try:
        async with session.post(target.events_url, data=body, headers=signed_headers(target.signing_secret, body)) as r:
            await r.read()
            status = r.status
    except aiohttp.ClientError as exc:
        result.ack_failures.append(f"{type(exc).__name__}: {exc}")
        return
    if status != 200:
        result.ack_failures.append(f"HTTP {status}")
        return
    result.acks.append(time.perf_counter() - started)
