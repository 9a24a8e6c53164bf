"""Arguments and set-up shared by several subcommands.

Imported by `folio --help`: what only a running command needs (Folio, Settings, the models) is imported where used.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import textwrap
from contextlib import suppress
from typing import TYPE_CHECKING

from bot import messages
from bot.errors import InvalidInput

if TYPE_CHECKING:
    from bot.app import Folio
    from bot.config import Settings
    from bot.models import Scope, Tag

INTERRUPTED = 130  # the exit status of a command ended by Ctrl-C (128 + SIGINT), as shells report it
PIPE_CLOSED = 141  # 128 + SIGPIPE: what `cmd | head` reports for a command the closed pipe ended
TAG_HELP = "narrow by a tag, key=value (key:value works too); repeat for more"


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
    from bot.config import load_settings

    return getattr(args, "settings", None) or load_settings(args.env_file)


def add_scope_arguments(parser: argparse.ArgumentParser, *, channel: bool = True) -> None:
    """--container NAME | --channel ID, and repeated --tag KEY=VALUE."""
    from bot.app.sample import SAMPLE_CONTAINER

    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--container", metavar="NAME", help=f"the container to search (default: {SAMPLE_CONTAINER}, the sample corpus)"
    )
    if channel:
        where.add_argument("--channel", metavar="ID", help="search what this Slack channel may see (channel policy)")
    parser.add_argument("--tag", metavar="KEY=VALUE", action="append", default=[], help=TAG_HELP)


def parse_tags(values: list[str]) -> tuple[Tag, ...]:
    """`--tag` values, each `key=value` or `key:value`."""
    from bot.models import Tag

    tags = []
    for value in values:
        try:
            tags.append(Tag.parse(value))
        except ValueError as exc:
            raise InvalidInput(messages.bad_cli_tag(value)) from exc
    return tuple(tags)


def scope_from(args: argparse.Namespace, folio: Folio) -> Scope:
    """The Scope named on the command line: a container directly, or a channel through the policy file."""
    from bot.app.sample import SAMPLE_CONTAINER
    from bot.models import Scope

    tags = parse_tags(args.tag)
    channel = getattr(args, "channel", None)
    if channel:
        return folio.channel_policy().scope_for(channel, tags=tags)
    return Scope(containers=(args.container or SAMPLE_CONTAINER,), tags=tags)


async def check_container(folio: Folio, name: str | None) -> None:
    """InvalidInput naming the containers that do hold documents when `name` (given by the user) holds none."""
    if not name:
        return
    held = await folio.retriever.containers()
    if held.get(name, 0) == 0:
        raise InvalidInput(messages.unknown_container(name, held))


async def checked_scope(args: argparse.Namespace, folio: Folio) -> Scope:
    """`scope_from`, after checking that a container named with --container holds documents."""
    await check_container(folio, getattr(args, "container", None))
    return scope_from(args, folio)


def interrupted() -> int:
    """Ctrl-C ended the command: no traceback, and the shell's prompt starts on a line of its own."""
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    return INTERRUPTED


def pipe_closed() -> int:
    """The reader of our output has gone (`folio search ... | head`): end quietly. stdout now points at the null
    device, or Python would report the broken pipe again when it flushes stdout at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return PIPE_CLOSED


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM (call it inside the running loop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with suppress(NotImplementedError):  # Windows has no signal handlers in asyncio
            loop.add_signal_handler(sig, stop.set)
    return stop
