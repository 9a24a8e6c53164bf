"""`folio chat [--container NAME] [--tag KEY=VALUE ...] [--thorough]`: a conversation in the terminal."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

from openai import AsyncOpenAI

from bot import messages
from bot.agent import AgentOptions, run_turn
from bot.cli.ask import StatusLine, format_answer
from bot.cli.common import SAMPLE_CONTAINER, HelpFormatter, add_scope_arguments, parse_tags, settings_from
from bot.config import Settings
from bot.errors import FolioError
from bot.models import Conversation, Profile, Scope, Tag
from bot.retrieval import Retriever
from bot.wiring import build_agent_options, build_model_client, build_retriever, ensure_sample_index

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
    retriever = build_retriever(settings)
    model = build_model_client(settings)
    options = build_agent_options(settings)
    conversation = Conversation(scope=scope, profile=profile)
    try:
        if scope.container == SAMPLE_CONTAINER:  # the embedded default: index the shipped samples on first use
            await ensure_sample_index(retriever)
        _write(output, messages.chat_welcome(scope.describe(), model_configured=model is not None))
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
            _write(output, await _turn(question, conversation, model=model, retriever=retriever, options=options))
    finally:
        await retriever.close()
        if model is not None:
            await model.close()
    return 0


async def _turn(
    question: str, conversation: Conversation, *, model: AsyncOpenAI | None, retriever: Retriever, options: AgentOptions
) -> str:
    """One answered line: the answer with its citations, or what went wrong (the chat goes on either way)."""
    status = StatusLine(sys.stderr)
    try:
        answer = await run_turn(
            question, conversation, model=model, retriever=retriever, options=options, progress=status
        )
    except FolioError as exc:
        return str(exc)
    finally:
        status.clear()
    conversation.record(question, answer)
    return format_answer(answer)


def _write(output: TextIO, text: str, *, end: str = "\n") -> None:
    output.write(text + end)
    output.flush()
