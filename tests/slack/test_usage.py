"""Usage counted in Redis where every replica sees it, and `folio usage` reading it back; daily budgets and the
questions-per-minute cap refusing a turn before its first model call."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import threading
import uuid
from contextlib import AsyncExitStack
from datetime import datetime, timezone
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot import metrics
from bot.cli import main
from bot.turns.trace import Trace
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, POLICY, Harness

USERS = ("U0USER0001", "U0USER0002", "U0USER0003", "U0USER0004", "U0USER0005")


class Metered:
    """Answers every turn with a search, then an answer, each with its own token counts, and adds up what it
    reported (the figure the counters must equal)."""

    def __init__(self, seed: int = 7) -> None:
        self.random = random.Random(seed)
        self.input = self.cached = self.output = self.calls = 0
        self.lock = threading.Lock()  # the fake answers each request in a thread of its own

    def __call__(self, request: Request) -> Step:
        with self.lock:
            tokens_in = self.random.randint(200, 900)
            cached, tokens_out = self.random.randint(0, tokens_in // 2), self.random.randint(10, 80)
            self.input, self.cached, self.output, self.calls = (
                self.input + tokens_in,
                self.cached + cached,
                self.output + tokens_out,
                self.calls + 1,
            )
        base = reply("Covered in network [S1].") if request.tool_outputs else tools(search("network coverage"))
        return Step(
            calls=base.calls, text=base.text, input_tokens=tokens_in, cached_tokens=cached, output_tokens=tokens_out
        )


def total_tokens() -> tuple[float, float, float]:
    sample = metrics.TOKENS.labels
    return sample("input")._value.get(), sample("cached")._value.get(), sample("output")._value.get()


async def test_usage_by_user_equals_what_the_model_reported_over_two_workers(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    redis = Redis.from_url(redis_url)
    await redis.delete(*[key async for key in redis.scan_iter("folio:usage:*")] or ["-"])  # this test's prefix
    metered = Metered()
    fake_model.respond_with(metered)
    before = total_tokens()
    asked: dict[str, int] = {}
    async with AsyncExitStack() as stack:
        workers = [
            await stack.enter_async_context(running_app(slack, fake_model, redis_url, corpus_index, prefix="folio"))
            for _ in range(2)
        ]
        for number, (user, worker) in enumerate(zip(itertools.cycle(USERS), itertools.cycle(workers))):
            if number == 30:
                break
            await worker.mention(f"Is out of network care covered? ({number})", user=user)
            asked[user] = asked.get(user, 0) + 1
        for worker in workers:
            await worker.settle()
    await redis.aclose()

    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("FOLIO_SAMPLE_CORPUS", "false")
    assert await asyncio.to_thread(main, ["usage", "--by", "user", "--json"]) == 0
    rows = {row["user"]: row for row in json.loads(capsys.readouterr().out)}

    assert set(rows) == set(USERS) and metered.calls == 60
    assert sum(row["input_tokens"] for row in rows.values()) == metered.input
    assert sum(row["cached_tokens"] for row in rows.values()) == metered.cached
    assert sum(row["output_tokens"] for row in rows.values()) == metered.output
    assert sum(row["model_calls"] for row in rows.values()) == 60
    assert {user: row["turns"] for user, row in rows.items()} == asked
    assert {user: row["searches"] for user, row in rows.items()} == asked
    after = total_tokens()  # the metrics say the same
    assert (after[0] - before[0], after[1] - before[1], after[2] - before[2]) == (
        metered.input,
        metered.cached,
        metered.output,
    )

    monkeypatch.setenv("FOLIO_PRICE_PER_MTOK_IN", "gpt-5-mini=2")
    monkeypatch.setenv("FOLIO_PRICE_PER_MTOK_OUT", "gpt-5-mini=8")
    assert await asyncio.to_thread(main, ["usage", "--by", "channel"]) == 0
    printed = capsys.readouterr().out.splitlines()
    dollars = (metered.input * 2 + metered.output * 8) / 1_000_000
    assert printed[0].split() == [
        "channel",
        "turns",
        "model",
        "calls",
        "searches",
        "input",
        "cached",
        "output",
        "est.",
        "cost",
    ]
    assert printed[1].split() == [
        CHANNEL,
        "30",
        "60",
        "30",
        f"{metered.input:,}",
        f"{metered.cached:,}",
        f"{metered.output:,}",
        f"${dollars:,.2f}",
    ]


async def test_a_person_over_the_daily_budget_is_stopped_at_the_first_turn_past_it_on_both_workers(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(lambda request: Step(text="Covered in network.", input_tokens=300, output_tokens=100))
    prefix = f"budget-{uuid.uuid4().hex[:8]}"
    async with AsyncExitStack() as stack:
        workers: list[Harness] = [
            await stack.enter_async_context(
                running_app(
                    slack,
                    fake_model,
                    redis_url,
                    corpus_index,
                    prefix=prefix,
                    folio_budget_user_daily_tokens=1000,
                )
            )
            for _ in range(2)
        ]
        threads = []
        for number in range(4):  # 400 tokens a turn: 0, 400, 800 are under 1000; at 1200 the fourth is refused
            worker = workers[number % 2]
            threads.append((worker, await worker.mention(f"Question {number}?")))
            await worker.settle()
        other = await workers[1].mention("And me?", user="U0USER0009")
        await workers[1].settle()
        today = datetime.now(timezone.utc).date()
        spent = {row.key: row for row in await workers[0].folio.ledger.usage.rows(since=today, until=today, by="user")}

    requests = len(fake_model.requests)
    assert requests == 4  # three of Alice's turns and the other person's; her fourth made no model call
    refused_worker, refused_ts = threads[3]
    [refusal] = refused_worker.texts(refused_ts)
    assert refusal.startswith(
        "You have used today's Folio budget of 1,000 tokens, so I will not start on this question. "
        "The budget resets at midnight UTC (in "
    ) and refusal.endswith("); an admin can raise it.")
    assert "Covered" in workers[0].texts(threads[2][1])[0] and "Covered" in workers[1].texts(other)[0]
    assert (spent[ALICE].turns, spent[ALICE].input, spent[ALICE].output) == (3, 900, 300)  # the refusal spent nothing


async def test_think_harder_counts_against_the_same_budget(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(lambda request: Step(text="Covered in network.", input_tokens=600, output_tokens=500))
    async with running_app(slack, fake_model, redis_url, corpus_index, folio_budget_user_daily_tokens=1000) as app:
        ts = await app.mention("Is it covered?")
        await app.settle()
        [answer] = [m for m in slack.thread(CHANNEL, ts)]
        await app.click("folio_think_harder", thread_ts=ts, message_ts=answer.ts)
        await app.settle()

    assert len(fake_model.requests) == 1
    assert app.texts(ts)[-1].startswith("You have used today's Folio budget of 1,000 tokens")


async def test_the_questions_per_minute_cap_holds_under_a_burst_of_20_in_one_second(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(lambda request: reply("Covered in network."))
    async with running_app(slack, fake_model, redis_url, corpus_index, folio_user_questions_per_minute=5) as app:
        burst = [await app.mention(f"Quick question {n}?") for n in range(20)]
        await app.settle()

    replies = [app.texts(ts)[0] for ts in burst]
    refused = [text for text in replies if text.startswith("You are asking faster than 5 questions a minute")]
    assert len(fake_model.requests) == 5 and len(refused) == 15
    said = "You are asking faster than 5 questions a minute, so I will not start on this one. Ask again in "
    assert all(text.startswith(said) and text.endswith((" s.", " 1 min.")) for text in refused)


async def test_a_channel_budget_in_channels_yaml_stops_the_channel_whoever_asks(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(lambda request: Step(text="Covered in network.", input_tokens=300, output_tokens=100))
    policy = {**POLICY, "channels": {CHANNEL: {"container": "benefits", "daily_tokens": 400}}}
    async with running_app(
        slack, fake_model, redis_url, corpus_index, policy=policy, folio_budget_channel_daily_tokens=100_000
    ) as app:
        first = await app.mention("First?", user="U0USER0001")
        await app.settle()
        second = await app.mention("Second?", user="U0USER0002")
        await app.settle()

    assert "Covered in network." in app.texts(first)[0] and len(fake_model.requests) == 1
    assert app.texts(second)[0].startswith("This channel has used today's Folio budget of 400 tokens")


async def test_citation_checks_and_think_harder_are_counted_once_each(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    """FOLIO_VERIFY_CITATIONS: each cited page costs one more model call; it is spent, so it is counted (usage,
    budgets, traces), as is the whole of a "Think harder" turn."""
    metered = Metered()

    def answer_or_check(request: Request) -> Step:
        if str(request.body.get("input", "")).startswith("Does the passage below support the claim?"):
            with metered.lock:
                metered.input, metered.output, metered.calls = metered.input + 77, metered.output + 1, metered.calls + 1
            return Step(text="SUPPORTED", input_tokens=77, output_tokens=1)
        return metered(request)

    fake_model.respond_with(answer_or_check)
    prefix = f"verify-{uuid.uuid4().hex[:8]}"
    async with running_app(
        slack, fake_model, redis_url, corpus_index, prefix=prefix, folio_verify_citations=True
    ) as app:
        ts = await app.mention("Is out of network care covered?")
        await app.settle()
        [answer] = slack.thread(CHANNEL, ts)
        await app.click("folio_think_harder", thread_ts=ts, message_ts=answer.ts)
        await app.settle()
        today = datetime.now(timezone.utc).date()
        [row] = await app.folio.ledger.usage.rows(since=today, until=today, by="user")
        assert app.folio.ledger.traces is not None
        traces = [Trace.from_json(text) for text in await app.folio.ledger.traces.all(app.thread_key(ts))]

    checks = [r for r in fake_model.requests if str(r.body.get("input", "")).startswith("Does the passage")]
    assert len(checks) == 2  # one cited page, two answers
    assert (row.turns, row.calls) == (2, metered.calls) == (2, 6)
    assert (row.input, row.output) == (metered.input, metered.output)
    assert "Covered in network" in app.texts(ts)[-1]
    traced = [step.tokens for trace in traces for step in trace.steps if step.tokens]
    assert len(traced) == 6 and sum(t[0] + t[2] for t in traced) == metered.input + metered.output
