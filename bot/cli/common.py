"""Arguments and set-up shared by several subcommands."""

from __future__ import annotations

import argparse
import textwrap

from bot.app import SAMPLE_CONTAINER, Folio
from bot.config import Settings, load_settings
from bot.errors import InvalidInput
from bot.models import Scope, Tag


class HelpFormatter(argparse.HelpFormatter):
    """Wraps prose lines to the terminal; keeps indented lines (examples) exactly as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = []
        for line in text.splitlines():
            if not line or line.startswith(" "):
                lines.append(indent + line)
            else:
                lines.append(textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent))
        return "\n".join(lines)


def settings_from(args: argparse.Namespace) -> Settings:
    """The Settings `main` read once (or read them now, raising ConfigurationError when they are wrong)."""
    return getattr(args, "settings", None) or load_settings(args.env_file)


def add_scope_arguments(parser: argparse.ArgumentParser, *, channel: bool = True) -> None:
    """--container NAME | --channel ID, and repeated --tag KEY=VALUE."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--container", metavar="NAME", help=f"the container to search (default: {SAMPLE_CONTAINER}, the sample corpus)"
    )
    if channel:
        where.add_argument("--channel", metavar="ID", help="search what this Slack channel may see (channel policy)")
    parser.add_argument(
        "--tag", metavar="KEY=VALUE", action="append", default=[], help="narrow by a tag; repeat for more"
    )


def parse_tags(values: list[str]) -> tuple[Tag, ...]:
    try:
        return tuple(Tag.parse(value) for value in values)
    except ValueError as exc:
        raise InvalidInput(f"--tag: {exc}") from exc


def scope_from(args: argparse.Namespace, folio: Folio) -> Scope:
    """The Scope named on the command line: a container directly, or a channel through the policy file."""
    tags = parse_tags(args.tag)
    channel = getattr(args, "channel", None)
    if channel:
        return folio.channel_policy().scope_for(channel, tags=tags)
    return Scope(container=args.container or SAMPLE_CONTAINER, tags=tags)
