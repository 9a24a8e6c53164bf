"""`folio trace THREAD_LINK_OR_TS [--channel ID] [--json]`: what each turn of a Slack thread did: model calls,
searches and the sources they returned, citations kept and removed, fallbacks (the traces `bot.store.traces` keeps)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from bot import messages
from bot.app import open_store
from bot.cli.common import HelpFormatter, settings_from
from bot.errors import InvalidInput
from bot.turns.trace import Trace, thread_in

EPILOG = """\
examples:
  folio trace https://acme.slack.com/archives/C0123ABCD/p1700000000123456
  folio trace 1700000000.123456 --channel C0123ABCD
  folio trace 1700000000.123456 --json"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "trace",
        help="why a thread's answers said what they said",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
        description="Print the trace of each turn of a Slack thread: every model call (profile, tokens, latency), "
        "every search with the sources it returned (file, page, score, container), the citations kept and removed, "
        "and the fallbacks taken. Give a message link (Copy link in Slack) or the thread's ts.",
    )
    parser.add_argument("thread", metavar="THREAD_LINK_OR_TS", help="a Slack message link, or the thread's ts")
    parser.add_argument("--channel", metavar="ID", help="the channel, when a bare ts is given")
    parser.add_argument("--json", action="store_true", help="print a JSON array, one object per turn")
    parser.set_defaults(run=run)


def thread_of(text: str) -> tuple[str | None, str]:
    """(channel or None, thread ts) from a message link or a ts; InvalidInput naming the forms accepted."""
    found = thread_in(text)
    if found is None:
        raise InvalidInput(messages.not_a_thread(text.strip()))
    return found


def run(args: argparse.Namespace) -> int:
    """Print the thread's traces, oldest turn first."""
    settings = settings_from(args)
    channel, thread_ts = thread_of(args.thread)
    channel = args.channel or channel

    async def go() -> list[str]:
        async with open_store(settings) as stores:
            return await stores.traces.find(thread_ts=thread_ts, channel=channel)

    traces = [Trace.from_json(text) for text in asyncio.run(go())]
    if not traces:
        print(messages.no_trace(thread_ts), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([json.loads(trace.to_json()) for trace in traces], ensure_ascii=False, indent=2))
        return 0
    for number, trace in enumerate(traces, 1):
        print(f"== turn {number}")
        print("\n".join(trace.lines()))
    return 0
