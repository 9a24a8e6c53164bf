"""`folio usage [--since DATE] [--by channel|user|day|profile|workspace] [--json]`: what Folio spent, from the
counters every replica adds to (bot.store.usage), with an estimated cost where FOLIO_PRICE_PER_MTOK_IN/OUT are set."""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import date, datetime, timedelta, timezone

from bot import messages
from bot.app import open_store
from bot.cli.common import HelpFormatter, settings_from
from bot.config.prices import PriceTable
from bot.errors import InvalidInput
from bot.store.usage import UsageRow

EPILOG = """\
examples:
  folio usage                           # the last 7 days, by day
  folio usage --by user --since 2026-11-01
  folio usage --by channel --json"""

BY = ("day", "channel", "user", "profile", "workspace", "surface")
COLUMNS = ("turns", "model calls", "searches", "input", "cached", "output")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "usage",
        help="tokens, model calls and searches by day, channel, user, profile or surface",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
        description="Print what Folio spent, counted in Redis by every replica: turns, model calls, searches and "
        "tokens, with an estimated cost when FOLIO_PRICE_PER_MTOK_IN and FOLIO_PRICE_PER_MTOK_OUT are set.",
    )
    parser.add_argument("--since", metavar="YYYY-MM-DD", type=_day, help="first UTC day counted (default: 6 days ago)")
    parser.add_argument("--by", choices=BY, default="day", help="one row per ... (default: day)")
    parser.add_argument("--json", action="store_true", help="print a JSON array, one object per row")
    parser.set_defaults(run=run)


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date: write YYYY-MM-DD, e.g. 2026-11-01") from None


def run(args: argparse.Namespace) -> int:
    """Print the usage table (or JSON)."""
    settings = settings_from(args)
    today = datetime.now(timezone.utc).date()
    since = args.since or today - timedelta(days=6)
    if since > today:
        raise InvalidInput(messages.since_in_future(str(since), str(today)))

    async def go() -> list[UsageRow]:
        async with open_store(settings) as stores:
            return await stores.usage.rows(since=since, until=today, by=args.by)

    rows = asyncio.run(go())
    prices = settings.prices
    if args.json:
        print(json.dumps([row_json(row, args.by, prices) for row in rows], indent=2))
    else:
        print(table(rows, args.by, prices))
    return 0


def cost(row: UsageRow, prices: PriceTable) -> float | None:
    """The row's estimated dollars, or None when a model it used has no price."""
    total = 0.0
    for model, spent in row.models.items():
        each = prices.cost(model, input_tokens=spent.input, cached_tokens=spent.cached, output_tokens=spent.output)
        if each is None:
            return None
        total += each
    return total


def row_json(row: UsageRow, by: str, prices: PriceTable) -> dict[str, object]:
    data: dict[str, object] = {
        by: row.key,
        "turns": row.turns,
        "model_calls": row.calls,
        "searches": row.searches,
        "input_tokens": row.input,
        "cached_tokens": row.cached,
        "output_tokens": row.output,
        "models": {
            model: {"input_tokens": t.input, "cached_tokens": t.cached, "output_tokens": t.output}
            for model, t in sorted(row.models.items())
        },
    }
    if prices.priced:
        data["cost_usd"] = cost(row, prices)
    return data


def table(rows: list[UsageRow], by: str, prices: PriceTable) -> str:
    """Columns padded to their widest cell, numbers right-aligned, a total line under them."""
    header = (by, *COLUMNS, *(("est. cost",) if prices.priced else ()))
    total = UsageRow(key="total")
    for row in rows:
        total.turns += row.turns
        total.calls += row.calls
        total.searches += row.searches
        for model, spent in row.models.items():
            total.add(f"in:{model}", spent.input)
            total.add(f"cached:{model}", spent.cached)
            total.add(f"out:{model}", spent.output)
    cells = [header, *(_cells(row, prices) for row in rows), _cells(total, prices)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip()
        for line in cells
    ]
    lines.insert(len(lines) - 1, "-" * len(lines[0]))
    return "\n".join(lines)


def _cells(row: UsageRow, prices: PriceTable) -> tuple[str, ...]:
    numbers = (row.turns, row.calls, row.searches, row.input, row.cached, row.output)
    cells = (row.key, *(f"{n:,}" for n in numbers))
    if prices.priced:
        dollars = cost(row, prices)
        cells += ("-" if dollars is None else f"${dollars:,.2f}",)
    return cells
