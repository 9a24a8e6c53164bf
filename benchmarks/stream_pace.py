"""How streamed answers read while the model writes them, one stream and many at once, inside Slack's tier.

    .venv/bin/python benchmarks/stream_pace.py                     # 1 and 30 streams, answers of 600 and 1,500 chars
    .venv/bin/python benchmarks/stream_pace.py --streams 30 --chars 1500 --rounds 8   # 30 at once, 8 times over

The real Bolt app (open_folio with its embedded Redis and sample index, FOLIO_STREAMING on) answers signed
mentions; the fake model searches once, then writes the answer at the given token rate; the fake Slack enforces
chat.appendStream's tier 4 as Slack does (past 100 calls in any 60 s, HTTP 429 with Retry-After) and records every
state of every message. Per run:

    first words      the model's first answer token -> the first streamed text on screen
    gaps             between visible updates from the first token to the end (the stop counts as the last update)
    end lag          the model's last token -> the stop on screen (chat.stopStream, the answer whole)
    appends          chat.appendStream calls, and the most in any 60 s (the tier: 100)
    429s, complete   calls the tier refused; answers whose final message holds the whole answer

The fakes run in this process's threads (as the tests' do): at 30 streams they share its CPU with Folio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402

from bot.app import Given, open_folio  # noqa: E402
from bot.config import ChannelPolicy, Settings  # noqa: E402
from bot.evaluation.scoring import percentile  # noqa: E402
from bot.slack.app import EVENTS_PATH, build_app, web_app  # noqa: E402
from bot.tasks import BackgroundTasks  # noqa: E402
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, search, tools  # noqa: E402
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack  # noqa: E402
from tests.slack.harness import SECRET, sign  # noqa: E402

CHANNEL = "C0BENCH001"
TIER = 100  # chat.appendStream: Tier 4, "100+ per minute" per workspace
SENTENCE = "Refunds for Acme orders are due within thirty days of the written request, paid to the same card [S1]. "
_NUMBER = re.compile(r"question (\d+)")


@dataclass(frozen=True)
class Figures:
    streams: int  # at once
    turns: int  # in all (streams x rounds)
    chars: int
    first_words_ms: list[float]
    gaps_ms: list[float]
    end_lag_ms: list[float]
    appends: int
    busiest_minute: int
    limited: int
    complete: int
    seconds: float


def answer_text(number: int, chars: int) -> str:
    """`Answer N:` and as many cited sentences as make about `chars` characters."""
    return f"Answer {number}: " + SENTENCE * max(1, round(chars / len(SENTENCE)))


def model_step(chars: int, tokens_per_second: float):  # type: ignore[no-untyped-def]
    def step(request: Request) -> Step:
        if not request.tool_outputs:
            found = _NUMBER.search(request.user_text)
            return tools(search(f"refund policy for Acme question {found.group(1) if found else 0}"))
        asked = json.loads(request.previous_calls()[0]["arguments"])["query"]
        number = int(_NUMBER.search(asked).group(1))  # type: ignore[union-attr]
        return reply(answer_text(number, chars), token_delay=1 / tokens_per_second)

    return step


async def run(streams: int, chars: int, tokens_per_second: float, *, rounds: int = 1) -> Figures:
    with (
        tempfile.TemporaryDirectory(prefix="folio-stream-pace-") as folder,
        FakeSlack() as slack,
        FakeResponses(validate=False) as model_server,
    ):
        slack.tier("chat.appendStream", per_window=TIER, window=60.0)
        model_server.respond_with(model_step(chars, tokens_per_second))
        async with AsyncExitStack() as stack:
            url, tasks = await _serve(stack, Path(folder), slack, model_server)
            began, roots = time.monotonic(), {}
            for first in range(0, streams * rounds, streams):  # `streams` at once, the next round when all are done
                roots.update(await _mentions(url, range(first, first + streams)))
                await tasks.drain()
            seconds = time.monotonic() - began
        return _figures(slack, model_server, roots, streams=streams, chars=chars, seconds=seconds)


def _figures(
    slack: FakeSlack, model: FakeResponses, roots: dict[int, str], *, streams: int, chars: int, seconds: float
) -> Figures:
    responses = {}
    for request in model.requests:
        if request.tool_outputs and request.response_id:
            asked = json.loads(request.previous_calls()[0]["arguments"])["query"]
            responses[int(_NUMBER.search(asked).group(1))] = request.response_id  # type: ignore[union-attr]
    first_words, gaps, end_lags, complete = [], [], [], 0
    for number, root in roots.items():
        [message] = [m for m in slack.thread(CHANNEL, root) if m.ts != root] or [None]
        response = responses.get(number)
        if message is None or response is None:
            continue
        complete += message.markdown.count("Refunds for Acme") == answer_text(number, chars).count("Refunds for Acme")
        first, last = model.first_tokens[response], model.last_tokens[response]
        views = slack.views_of(CHANNEL, message.ts)
        texts = [
            view.at
            for view, before in zip(views, [None, *views])
            if view.streaming and view.markdown and (before is None or before.markdown != view.markdown)
        ]
        end = next((view.at for view in views if not view.streaming), None)
        if texts:
            first_words.append(1000 * (texts[0] - first))
        if end is not None:
            end_lags.append(1000 * (end - last))
            updates = [first, *[at for at in texts if at < end], end]
            gaps += [1000 * (later - earlier) for earlier, later in zip(updates, updates[1:])]
    appended = sorted(call.at for call in slack.calls if call.method == "chat.appendStream")
    busiest = max((sum(1 for at in appended if start <= at < start + 60) for start in appended), default=0)
    return Figures(
        streams,
        len(roots),
        chars,
        first_words,
        gaps,
        end_lags,
        len(appended),
        busiest,
        len(slack.limited),
        complete,
        seconds,
    )


async def _serve(
    stack: AsyncExitStack, data: Path, slack: FakeSlack, model_server: FakeResponses
) -> tuple[str, BackgroundTasks]:
    """Folio on 127.0.0.1 against the fakes, streaming; every client is closed by `stack`."""
    settings = Settings(
        slack_bot_token=slack.token,
        slack_signing_secret=SECRET,
        slack_api_url=slack.base_url,
        folio_data_dir=data,
        folio_code_interpreter=False,
        folio_streaming=True,
        folio_turn_timeout=120,
    )
    model = model_server.client()
    stack.push_async_callback(model.close)
    policy = ChannelPolicy.model_validate({"channels": {CHANNEL: {"container": "sample"}}})
    folio = await stack.enter_async_context(open_folio(settings, Given(model=model, policy=policy), serving=True))
    runner = web.AppRunner(web_app(build_app(folio)), access_log=None)
    await runner.setup()
    stack.push_async_callback(runner.cleanup)
    stack.push_async_callback(folio.tasks.cancel)
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return f"http://127.0.0.1:{runner.addresses[0][1]}{EVENTS_PATH}", folio.tasks


async def _mentions(url: str, numbers: range) -> dict[int, str]:
    """One signed mention per number, all at once, each in its own thread; question number -> thread ts."""
    roots = {n: f"1900000000.{n:06d}" for n in numbers}

    async def mention(http: aiohttp.ClientSession, n: int) -> None:
        event = {
            "type": "app_mention",
            "user": "U0BENCH01",
            "text": f"<@{BOT_USER}> refund policy, question {n}?",
            "ts": roots[n],
            "channel": CHANNEL,
            "event_ts": roots[n],
        }
        body = json.dumps({"type": "event_callback", "team_id": TEAM, "event_id": f"EvS{n}", "event": event})
        async with http.post(url, data=body, headers={**sign(body), "Content-Type": "application/json"}) as answer:
            assert answer.status == 200, answer.status

    async with aiohttp.ClientSession() as http:
        await asyncio.gather(*(mention(http, n) for n in numbers))
    return roots


def row(figures: Figures) -> str:
    def pct(values: list[float], q: float) -> str:
        return f"{percentile(values, q):.0f}" if values else "-"

    f = figures
    return (
        f"| {f.streams} x {f.turns // f.streams} | {f.chars} | {pct(f.first_words_ms, 50)} / {pct(f.first_words_ms, 100)} | "
        f"{pct(f.gaps_ms, 50)} / {pct(f.gaps_ms, 90)} / {pct(f.gaps_ms, 100)} | "
        f"{pct(f.end_lag_ms, 50)} / {pct(f.end_lag_ms, 100)} | {f.appends} in {f.seconds:.1f} s "
        f"(busiest 60 s: {f.busiest_minute}) | {f.limited} | {f.complete}/{f.turns} |"
    )


HEADER = (
    "| streams x rounds | chars | first words p50 / max ms | gaps p50 / p90 / max ms | end lag p50 / max ms | appends | 429s "
    "| complete |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 30])
    parser.add_argument("--chars", type=int, nargs="+", default=[600, 1500])
    parser.add_argument("--tokens-per-second", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=1, help="times the streams ask at once, one after another")
    args = parser.parse_args()
    print(f"{args.tokens_per_second:.0f} tokens a second; appendStream tier {TIER} a minute")
    print(HEADER)
    for streams in args.streams:
        for chars in args.chars:
            print(row(asyncio.run(run(streams, chars, args.tokens_per_second, rounds=args.rounds))), flush=True)


if __name__ == "__main__":
    main()
