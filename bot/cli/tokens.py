"""`folio access token create|list|revoke`: Folio-issued tokens for agents (`folio mcp`, or /mcp without an identity
provider), each acting as one Slack person. The token is printed once, as the last line of `create`; Redis keeps only
its SHA-256 digest (bot.store.tokens)."""

from __future__ import annotations

import argparse
import asyncio
import re
from datetime import datetime, timezone

from bot import messages
from bot.app import open_store
from bot.cli.common import HelpFormatter
from bot.config import Settings
from bot.config.channels import is_user_id
from bot.errors import InvalidInput
from bot.store.tokens import MAX_DAYS, TokenRecord, tokens_of

EPILOG = """\
examples:
  folio access token create --user U0123ABCD --expires 90d --label "Ana's laptop"
  folio access token list
  folio access token revoke 3f9a1c0b7d2e"""

_DURATION = re.compile(r"^\s*(\d{1,5})\s*([dh])\s*$", re.IGNORECASE)


def parser() -> argparse.ArgumentParser:
    """The parser of the words after `folio access token`."""
    tokens = argparse.ArgumentParser(
        prog="folio access token",
        description="Tokens for agents, each acting as one Slack person (its access in "
        "direct messages with Folio). Only a digest is kept: a lost token cannot be shown again, only revoked.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    actions = tokens.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="make a token and print it (last line)")
    create.add_argument("--user", required=True, help="the Slack user ID it acts as (U0123ABCD)")
    create.add_argument(
        "--expires",
        type=days,
        default=90.0,
        metavar="DURATION",
        help=f"how long it is valid: 90d, 12h (default 90d, at most {MAX_DAYS}d)",
    )
    create.add_argument("--label", default="", help="a note for `list` (whose laptop, which service)")
    actions.add_parser("list", help="the valid tokens: id, person, expiry, label (never the token)")
    revoke = actions.add_parser("revoke", help="revoke a token by its id (from `list`)")
    revoke.add_argument("id", help="the token's id, as `list` shows it")
    return tokens


def days(text: str) -> float:
    """`90d` or `12h` as days; a usage error otherwise."""
    found = _DURATION.match(text)
    value = float(found.group(1)) / (1 if found.group(2).lower() == "d" else 24) if found else 0.0
    if not 0 < value <= MAX_DAYS:
        raise argparse.ArgumentTypeError(messages.bad_duration(text))
    return value


def run(settings: Settings, words: list[str]) -> int:
    """Run `folio access token WORDS...`."""
    args = parser().parse_args(words)
    if args.action == "create" and not is_user_id(args.user):
        raise InvalidInput(messages.not_a_user_id(args.user))
    print(asyncio.run(_act(settings, args)))
    return 0


async def _act(settings: Settings, args: argparse.Namespace) -> str:
    async with open_store(settings) as stores:
        tokens = tokens_of(stores.conversations)
        if args.action == "create":
            issued = await tokens.create(user=args.user, team="", days=args.expires, label=args.label)
            return "\n".join([_line(issued.record), "The token (shown only now; keep it secret):", issued.secret])
        if args.action == "list":
            records = await tokens.list()
            return "\n".join(_line(record) for record in records) or "No valid token."
        revoked = await tokens.revoke(args.id)
        if revoked is None:
            raise InvalidInput(f"No token has the id {args.id!r}: `folio access token list` shows them.")
        return f"Revoked: {_line(revoked)}"


def _line(record: TokenRecord) -> str:
    expires = datetime.fromtimestamp(record.expires, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    label = f"  {record.label}" if record.label else ""
    return f"{record.id}  {record.user}  expires {expires}{label}"
