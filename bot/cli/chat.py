"""`folio chat [--container NAME] [--tag KEY=VALUE ...] [--thorough]`: a conversation in the terminal."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

from bot import messages
from bot.agent import run_turn
from bot.app import SAMPLE_CONTAINER, Folio, open_folio
from bot.cli.ask import StatusLine, format_answer
from bot.cli.common import HelpFormatter, add_scope_arguments, check_container, parse_tags, settings_from
from bot.config import Settings
from bot.errors import FolioError
from bot.models import Conversation, Profile, Scope, Tag

EXIT_WORDS = {"exit", "quit"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chat", help="a conversation in the terminal (follow-up questions keep the context)",
        description="Ask questions one line at a time; follow-ups continue the conversation. "
        "End with exit or Ctrl-D.",
        epilog="examples:\n"
        "  folio chat                          # the shipped sample corpus\n"
        "  folio chat --container benefits --tag year=2026",
        formatter_class=HelpFormatter,
    )  # fmt: skip
    add_scope_arguments(parser, channel=False)
    parser.add_argument("--thorough", action="store_true", help="more reasoning effort (the thorough profile)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Chat until end of input."""
    settings = settings_from(args)
    profile: Profile = "thorough" if args.thorough else "fast"
    return asyncio.run(chat_loop(settings, container=args.container, tags=parse_tags(args.tag), profile=profile))


async def chat_loop(
    settings: Settings,
    *,
    container: str | None = None,
    input_stream: TextIO = sys.stdin,
    output: TextIO = sys.stdout,
    tags: tuple[Tag, ...] = (),
    profile: Profile = "fast",
) -> int:
    """Answer one line at a time in one in-memory conversation; end at EOF or `exit`. Returns the exit code."""
    scope = Scope(container=container or SAMPLE_CONTAINER, tags=tags)
    conversation = Conversation(scope=scope, profile=profile)
    async with open_folio(settings, file_links=True) as folio:
        await check_container(folio, container)
        _write(output, messages.chat_welcome(scope.describe(), model_configured=folio.model is not None))
        while True:
            _write(output, "\n> ", end="")
            line = await asyncio.to_thread(input_stream.readline)
            question = line.strip()
            if not input_stream.isatty():  # piped input is not echoed by a terminal: show it in the transcript
                _write(output, question)
            if not line or question.lower() in EXIT_WORDS:
                break
            if not question:
                continue
            _write(output, await _turn(folio, question, conversation))
    return 0


async def _turn(folio: Folio, question: str, conversation: Conversation) -> str:
    """One answered line: the answer with its citations, or what went wrong (the chat goes on either way)."""
    status = StatusLine(sys.stderr)
    try:
        answer = await run_turn(
            question, conversation, model=folio.model, retriever=folio.retriever, options=folio.options,
            events=status.show,
        )  # fmt: skip
    except FolioError as exc:
        return str(exc)
    finally:
        status.clear()
    conversation.record(question, answer)
    return format_answer(answer)


def _write(output: TextIO, text: str, *, end: str = "\n") -> None:
    output.write(text + end)
    output.flush()
