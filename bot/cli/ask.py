"""`folio ask QUESTION [--container NAME | --channel ID] [--tag KEY=VALUE ...] [--thorough] [--json]`"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from bot.app import open_folio
from bot.cli.common import HelpFormatter, add_scope_arguments, checked_scope, settings_from
from bot.cli.render import StatusLine, Style, answer_text
from bot.cli.turn import ask_once, terminal_services
from bot.config import Settings
from bot.models import Answer, Profile


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="answer one question, citing the page of every claim",
        description="Answer one question from the documents of a container; every claim cites its page. "
        "Without a model (OPENAI_API_KEY or AZURE_OPENAI_ENDPOINT) the best passages are quoted instead.",
        epilog="examples:\n"
        '  folio ask "What is the refund window for annual plans?"\n'
        '  folio ask "Compare the payment terms of Acme and Brightline" --tag doc_type=contract --thorough\n'
        '  folio ask "Does the Standard plan cover hearing aids?" --container benefits --json',
        formatter_class=HelpFormatter,
    )
    parser.add_argument("question", metavar="QUESTION", help="the question, in quotes")
    add_scope_arguments(parser)
    parser.add_argument("--thorough", action="store_true", help="more reasoning effort (the thorough profile)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Answer the question and print it with its citations."""
    settings = settings_from(args)
    profile: Profile = "thorough" if args.thorough else "fast"
    status = StatusLine(sys.stderr, os.environ)
    try:
        answer = asyncio.run(ask(settings, args, profile=profile, status=status))
    finally:
        status.clear()
    if args.json:
        print(json.dumps(answer_json(answer), ensure_ascii=False, indent=2))
    else:
        print(answer_text(answer, Style.detect(sys.stdout, os.environ)))
    return 0


async def ask(settings: Settings, args: argparse.Namespace, *, profile: Profile, status: StatusLine) -> Answer:
    """One turn in a new conversation of the scope the arguments name."""
    async with open_folio(settings, file_links=True) as folio:
        services = terminal_services(folio, await checked_scope(args, folio))
        return await ask_once(args.question, services, status, profile=profile)


def answer_json(answer: Answer) -> dict[str, object]:
    """The --json object: the answer, its citations, the tool calls in order, and what the turn cost."""
    return {
        "answer": answer.text,
        "answerable": answer.answerable,
        "mode": answer.mode,
        "notices": list(answer.notices),
        "citations": [
            {"label": c.label, "file": c.file, "title": c.title, "page": c.page, "url": c.url} for c in answer.citations
        ],
        "tool_calls": [{"name": call.name, "arguments": call.arguments} for call in answer.tool_calls],
        "response_ids": list(answer.response_ids),
        "cap_hit": answer.cap_hit,
        "usage": {"input_tokens": answer.usage.input_tokens, "output_tokens": answer.usage.output_tokens},
    }
