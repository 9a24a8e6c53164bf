"""`folio access USER_ID`: what that person may search in direct messages and the assistant, and which rule said so.
`folio access token create|list|revoke`: tokens for agents (bot.cli.tokens)."""

from __future__ import annotations

import argparse
import asyncio

from bot import messages
from bot.access import Grant
from bot.app import Given, open_folio
from bot.cli import tokens
from bot.cli.common import HelpFormatter, settings_from
from bot.config import ChannelPolicy, Settings
from bot.config.channels import is_user_id
from bot.errors import ConfigurationError, InvalidInput

DESCRIPTION = (
    "Print the containers a Slack user may search in a direct message with Folio (and in the assistant, unless they "
    "view a connected channel they belong to), with the access rules that gave each one. Group membership is asked "
    "of Slack (SLACK_BOT_TOKEN, scope usergroups:read) and shares Folio's cache in Redis."
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "access",
        help="show what a Slack user may search in direct messages, and why; manage tokens",
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
        epilog="examples:\n  folio access U0123ABCD\n  folio access token create --user U0123ABCD --expires 90d\n"
        "  folio access token list\n  folio access token revoke TOKEN_ID   (see `folio access token --help`)",
    )
    parser.add_argument(
        "user",
        metavar="USER_ID",
        help="a Slack user ID (U0123ABCD; profile > ... > Copy member ID), "
        "or `token` to create, list or revoke tokens for agents",
    )
    parser.add_argument("words", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)  # after `token`
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Look the person up and print the answer (or manage tokens: `folio access token ...`)."""
    if args.user == "token":
        return tokens.run(settings_from(args), args.words)
    if args.words:
        raise InvalidInput(f"`folio access` takes one user ID; {' '.join(args.words)!r} is more.")
    print(asyncio.run(access_report(settings_from(args), args.user)))
    return 0


async def access_report(settings: Settings, user: str, given: Given | None = None) -> str:
    """The report for `user`; `given` goes to `open_folio` (tests pass their fakes)."""
    if not is_user_id(user):  # else a name or a handle gets the default's report, as if the person existed
        raise InvalidInput(messages.not_a_user_id(user))
    async with open_folio(settings, given, serving=True) as folio:
        policy = folio.channel_policy()
        if policy.access is None:
            return format_report(user, policy, grant=None, unknown=[])
        if folio.access is None:
            raise ConfigurationError("SLACK_BOT_TOKEN is not set: Folio cannot ask Slack who is in which user group.")
        unknown = await folio.access.unknown_groups(policy)
        grant = await folio.access.grant(policy, team=await folio.access.team(), user=user)
        return format_report(user, policy, grant=grant, unknown=unknown)


def format_report(user: str, policy: ChannelPolicy, *, grant: Grant | None, unknown: list[str]) -> str:
    """Plain text: the containers, each rule that matched, the rules that did not, and handles Slack lacks."""
    if grant is None:
        if policy.dm is None:
            return f"{user}: direct messages are not connected (the policy has neither access: nor dm:)."
        return f"{user} may search in direct messages: {policy.dm.container} (the dm: rule, the same for everyone)"
    searched = ", ".join(grant.containers) or "nothing"
    lines = [f"{user} may search in direct messages: {searched}"]
    lines += [f"  matched      {rule}" for rule in grant.matched] or ["  matched      no rule"]
    assert policy.access is not None
    missed = [key for key in policy.access.groups if key not in grant.member_of and key not in unknown]
    lines += [f"  not matched  group {key} (not a member)" for key in missed]
    lines += [f"  unknown      group {key}: Slack has no user group with this handle" for key in unknown]
    return "\n".join(lines)
