"""`folio chat [--container NAME] [--tag KEY=VALUE ...] [--thorough]`: a conversation in the terminal.

The prompt is read in the main thread (readline needs it, and Ctrl-C must reach it at once); each answer runs on
one event loop kept for the whole chat (`asyncio.Runner`), which turns Ctrl-C during an answer into cancelling it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from contextlib import AsyncExitStack
from typing import TextIO

from bot import messages
from bot.app import SAMPLE_CONTAINER, open_folio
from bot.cli.common import INTERRUPTED, HelpFormatter, add_scope_arguments, check_container, parse_tags, settings_from
from bot.cli.lines import HISTORY_FILE, LineReader
from bot.cli.render import DIM, YELLOW, StatusLine, Style, answer_text
from bot.cli.turn import ask_once, terminal_services
from bot.config import Settings
from bot.errors import FolioError
from bot.models import Profile, Scope, Tag
from bot.turns import TurnServices

EXIT_WORDS = {"exit", "quit"}
PROMPT = "> "


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="a conversation in the terminal (follow-up questions keep the context)",
        description="Ask questions one line at a time; follow-ups continue the conversation (without a model, "
        "a question starting with 'and', 'what about', 'the', ... is searched with the words of the one before). "
        "Arrow keys edit the line, Up and Ctrl-R find earlier questions (kept in the data folder). "
        "Ctrl-C cancels an answer, or ends the chat on an empty line; exit or Ctrl-D ends it.",
        epilog="examples:\n"
        "  folio chat                          # the shipped sample corpus\n"
        "  folio chat --container benefits --tag year=2026",
        formatter_class=HelpFormatter,
    )
    add_scope_arguments(parser, channel=False)
    parser.add_argument("--thorough", action="store_true", help="more reasoning effort (the thorough profile)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Chat until end of input."""
    settings = settings_from(args)
    profile: Profile = "thorough" if args.thorough else "fast"
    return chat(settings, container=args.container, tags=parse_tags(args.tag), profile=profile)


def chat(
    settings: Settings,
    *,
    container: str | None = None,
    tags: tuple[Tag, ...] = (),
    profile: Profile = "fast",
    input_stream: TextIO | None = None,
    output: TextIO | None = None,
) -> int:
    """Answer one line at a time in one in-memory conversation; returns the exit code: 0 after `exit` or Ctrl-D,
    130 after Ctrl-C on an empty line."""
    output = output or sys.stdout
    reader = LineReader(input_stream or sys.stdin, output, history=settings.folio_data_dir / HISTORY_FILE)
    scope = Scope(containers=(container or SAMPLE_CONTAINER,), tags=tags)
    style = Style.detect(output, os.environ)
    with asyncio.Runner() as runner:
        stack = AsyncExitStack()
        folio = runner.run(stack.enter_async_context(open_folio(settings, file_links=True)))
        try:
            runner.run(check_container(folio, container))
            welcome = messages.chat_welcome(scope.describe(), model_configured=folio.model is not None)
            _write(output, style.paint(welcome, DIM))
            return _converse(runner, terminal_services(folio, scope), profile, reader, output, style)
        finally:
            runner.run(stack.aclose())


def _converse(
    runner: asyncio.Runner, services: TurnServices, profile: Profile, reader: LineReader, output: TextIO, style: Style
) -> int:
    """One conversation (one thread of `services`' memory), a line at a time."""
    while True:
        _write(output, "")
        try:
            line = reader.read(PROMPT)
        except KeyboardInterrupt:
            _write(output, "")  # finish the line the ^C was typed on
            if reader.typed:
                continue  # as in a shell, Ctrl-C on a typed line drops that line
            return INTERRUPTED
        if line is None:
            _write(output, "")  # Ctrl-D: leave the shell's prompt on a line of its own
            return 0
        question = line.strip()
        if question.lower() in EXIT_WORDS:
            return 0
        if not question:
            continue
        reader.save()
        try:
            shown = runner.run(_turn(services, question, profile, style))
        except KeyboardInterrupt:  # the Runner cancelled the turn: nothing of it is recorded
            shown = style.paint(messages.CHAT_CANCELLED, YELLOW)
        _write(output, shown)


async def _turn(services: TurnServices, question: str, profile: Profile, style: Style) -> str:
    """One answered line: the answer with its citations, or what went wrong (the chat goes on either way)."""
    status = StatusLine(sys.stderr, os.environ)
    try:
        answer = await ask_once(question, services, status, profile=profile)
    except FolioError as exc:
        return str(exc)
    finally:
        status.clear()
    return answer_text(answer, style)


def _write(output: TextIO, text: str) -> None:
    output.write(text + "\n")
    output.flush()
