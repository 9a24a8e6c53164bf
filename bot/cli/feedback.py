"""`folio feedback`: what people said of Folio's answers (👍 / 👎, the 👎 form's reason and text), newest last;
`folio feedback export FILE` writes them as `folio eval` golden lines."""

from __future__ import annotations

import argparse
import asyncio
import json
from contextlib import AsyncExitStack
from dataclasses import asdict
from datetime import UTC, date, datetime
from pathlib import Path

from bot.app import open_store
from bot.cli.common import HelpFormatter, settings_from
from bot.config import Settings
from bot.errors import InvalidInput
from bot.evaluation.feedback_export import golden_lines
from bot.evaluation.outdated import Flagged, flagged_line, outdated_documents
from bot.store.feedback import FeedbackRecord, FeedbackStore

DESCRIPTION = (
    "List the feedback people gave Folio's answers in Slack: who, where, 👍 or 👎, the reason and text of a 👎, and "
    "the question, answer and cited pages as they were. Kept in Redis for as long as conversations are (30 days). "
    "`folio feedback export FILE` writes golden lines for `folio eval`: a 👍 answer's cited pages as the truth, a 👎 "
    'as a line to review (marked "review": true, which eval skips until you write its truth and remove the mark).'
)
EPILOG = """\
examples:
  folio feedback --since 2026-11-01 --channel C0123ABCD
  folio feedback --json
  folio feedback export feedback.jsonl
  folio feedback --outdated        # documents flagged outdated, most flagged first, with their threads
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "feedback",
        help="list (or export as golden lines) the feedback on answers",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("action", nargs="*", metavar="export FILE", help="write golden lines to FILE instead")
    parser.add_argument("--since", type=_date, help="only feedback given on or after this day (YYYY-MM-DD)")
    parser.add_argument("--channel", help="only feedback on answers in this Slack channel (ID)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument(
        "--outdated",
        action="store_true",
        help="list the documents cited by answers flagged outdated, most flagged first",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    export = _export_path(args.action)
    records = asyncio.run(feedback_records(settings_from(args), since=args.since, channel=args.channel))
    if export is not None:
        lines = golden_lines(records)
        export.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        review = sum('"review": true' in line for line in lines)
        print(f"wrote {len(lines)} golden lines to {export} ({review} to review before `folio eval` uses them)")
        return 0
    if args.outdated:
        return _print_outdated(outdated_documents(records), as_json=args.json)
    for record in records:
        print(json.dumps(asdict(record), ensure_ascii=False) if args.json else format_record(record))
    if not records and not args.json:
        print("no feedback yet" + (" matching the filters" if args.since or args.channel else ""))
    return 0


async def feedback_records(
    settings: Settings, *, since: date | None, channel: str | None, store: FeedbackStore | None = None
) -> list[FeedbackRecord]:
    """The kept records, oldest first, filtered; from `store`, else the Redis `folio serve` uses (REDIS_URL, or the
    embedded one in the data folder). Only Redis is opened: listing feedback needs no index and no model."""
    async with AsyncExitStack() as stack:
        if store is None:
            store = (await stack.enter_async_context(open_store(settings))).feedback
        start = datetime.combine(since, datetime.min.time(), UTC).timestamp() if since else 0.0
        records = await store.since(start)
    return [record for record in records if channel is None or record.channel == channel]


def _print_outdated(flagged: list[Flagged], *, as_json: bool) -> int:
    for item in flagged:
        print(json.dumps(asdict(item), ensure_ascii=False) if as_json else flagged_line(item))
    if not flagged and not as_json:
        print("no document flagged outdated")
    return 0


def format_record(record: FeedbackRecord) -> str:
    """Two lines: when, where, who, the verdict and why; then the question and the pages the answer cited."""
    verdict = "👍" if record.rating == "helpful" else "👎 " + (record.reason or "no reason given")
    said = f' "{record.comment}"' if record.comment else ""
    cited = ", ".join(record.pages) or "no pages"
    return (
        f"{record.at}  {record.channel}  {record.user}  {verdict}{said}\n"
        f"    Q: {record.question}\n    cited: {cited}  (scope {', '.join(record.containers)}, {record.profile})"
    )


def _export_path(words: list[str]) -> Path | None:
    if not words:
        return None
    if len(words) == 2 and words[0] == "export":
        return Path(words[1])
    raise InvalidInput("Usage: folio feedback [--since DATE] [--channel C] [--json], or folio feedback export FILE.")


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day such as 2026-11-01") from exc
