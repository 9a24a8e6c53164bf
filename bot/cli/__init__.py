"""The `folio` command: one module per subcommand, each with `add_parser(subparsers)` and `run(args) -> int`.

Every command opens Folio through `bot.app.open_folio` and closes it when done. Only the module of the command
being run is imported (the others are listed by their summary), so that `folio --help` does not wait for the model,
Slack and Azure clients to load (benchmarks/startup.py).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from bot import logs
from bot.cli.common import HelpFormatter, interrupted, parse_tags, pipe_closed
from bot.errors import ConfigurationError, FolioError

if TYPE_CHECKING:
    from bot.config import Settings

# name: (module, the one-line summary `folio --help` shows; the module's add_parser says the same)
COMMANDS = {
    "index": ("bot.cli.index", "index documents into a container"),
    "list": ("bot.cli.list", "list the indexed documents"),
    "remove": ("bot.cli.remove", "remove indexed documents"),
    "sync": ("bot.cli.sync", "sync the sources of the sources file into the index"),
    "sources": ("bot.cli.sources", "what the last sync of each source did, and when the next runs"),
    "watch": ("bot.cli.watch", "what the watch of changed documents did, and the notes waiting"),
    "search": ("bot.cli.search", "search the documents of a container (no model involved)"),
    "ask": ("bot.cli.ask", "answer one question, citing the page of every claim"),
    "chat": ("bot.cli.chat", "a conversation in the terminal (follow-up questions keep the context)"),
    "serve": ("bot.cli.serve_command", "run Folio in Slack (a terminal chat when Slack is not configured)"),
    "access": ("bot.cli.access", "show what a Slack user may search in direct messages, and why; manage tokens"),
    "doctor": ("bot.cli.doctor", "check that every part is wired right, with what to do when one is not"),
    "eval": ("bot.cli.eval", "score answers (or retrieval) on a golden file"),
    "feedback": ("bot.cli.feedback", "list (or export as golden lines) the feedback on answers"),
    "usage": ("bot.cli.usage", "tokens, model calls and searches by day, channel, user, profile or surface"),
    "trace": ("bot.cli.trace", "why a thread's answers said what they said"),
    "mcp": ("bot.cli.mcp", "serve MCP on stdin/stdout for one person's agent (FOLIO_MCP_TOKEN)"),
}

DESCRIPTION = """\
Folio answers questions about your documents, citing the page of every claim.

With no configuration it runs on embedded defaults: a local search index in ./.folio, an embedded Redis,
and search-only answers (quoted passages) until a model is configured. See README.md.

Tags are written key=value in every command (key:value works too, as in Slack's /ask).
"""

EPILOG = """\
examples:
  folio index ./contracts --container legal --tag department=legal
  folio sync                       # every source of sources.yaml: new, changed and gone files
  folio list --container legal
  folio remove old-contract.pdf --container legal
  folio search "payment terms" --container legal --json
  folio ask "What are the payment terms with Acme?" --container legal
  folio chat
  folio serve                      # Slack (terminal chat when no Slack tokens are set)
  folio access U0123ABCD           # what that person may search in direct messages, and why
  folio doctor                     # is every part wired right? one line each, with what to do
  folio feedback --since 2026-11-01  # what people said of answers; `folio feedback export FILE` for eval
  folio usage --by user            # tokens, model calls and searches per person (cost with a price table)
  folio trace THREAD_LINK          # why each answer of a thread said what it said
  folio access token create --user U0123ABCD --expires 90d   # a token for an agent (`folio mcp`, /mcp)

run `folio COMMAND --help` for the options of one command.
"""


def build_parser(load: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser (`load` None), or one where only the commands in `load` have their options and the others
    are listed by name and summary."""
    parser = argparse.ArgumentParser(
        prog="folio", description=DESCRIPTION, epilog=EPILOG, formatter_class=HelpFormatter
    )
    parser.add_argument("--env-file", default=".env", help="settings file read besides the environment (default: .env)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, summary) in COMMANDS.items():
        if load is None or name in load:
            importlib.import_module(module).add_parser(subparsers)
        else:
            subparsers.add_parser(name, help=summary)
    return parser


def command_in(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names: its first word that is neither an option nor --env-file's value."""
    words = iter(argv)
    for word in words:
        if word == "--env-file":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `folio` console script."""
    argv = sys.argv[1:] if argv is None else [*argv]  # not list(): bot.cli.list, once imported, shadows it here
    chosen = command_in(argv)
    parser = build_parser(load={chosen} & COMMANDS.keys() if chosen is not None else set())
    args = parser.parse_args(argv)
    args.settings = _settings_for_logging(args.env_file)
    logs.configure(args.settings, verbose=args.verbose)
    try:
        parse_tags(getattr(args, "tag", None) or [])  # bad input is refused before anything is opened or created
        code = int(args.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the try, rather than at exit
        return code
    except FolioError as exc:
        logs.say(f"folio: {exc}", level=logging.ERROR)  # as written; in JSON mode a JSON line like every other
        return 2
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:
        return pipe_closed()


def _settings_for_logging(env_file: str) -> Settings | None:
    """Settings when they can be read; None lets the command itself say what is wrong with them (in one line)."""
    from bot.config import load_settings

    try:
        return load_settings(env_file)
    except ConfigurationError:
        return None


if __name__ == "__main__":
    sys.exit(main())
