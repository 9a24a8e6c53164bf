"""The `folio` command: one module per subcommand, each with `add_parser(subparsers)` and `run(args) -> int`.

Every command opens Folio through `bot.app.open_folio` and closes it when done.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bot import logs
from bot.cli import access, ask, chat, doctor, eval, index, remove, search, serve, trace, usage
from bot.cli import list as list_files  # the module `folio list`; not shadowing the builtin here
from bot.cli.common import HelpFormatter, interrupted, parse_tags, pipe_closed
from bot.config import Settings, load_settings
from bot.errors import ConfigurationError, FolioError

COMMANDS = (index, list_files, remove, search, ask, chat, serve, access, doctor, eval, usage, trace)

DESCRIPTION = """\
Folio answers questions about your documents, citing the page of every claim.

With no configuration it runs on embedded defaults: a local search index in ./.folio, an embedded Redis,
and search-only answers (quoted passages) until a model is configured. See README.md.

Tags are written key=value in every command (key:value works too, as in Slack's /ask).
"""

EPILOG = """\
examples:
  folio index ./contracts --container legal --tag department=legal
  folio list --container legal
  folio remove old-contract.pdf --container legal
  folio search "payment terms" --container legal --json
  folio ask "What are the payment terms with Acme?" --container legal
  folio chat
  folio serve                      # Slack (terminal chat when no Slack tokens are set)
  folio access U0123ABCD           # what that person may search in direct messages, and why
  folio doctor                     # is every part wired right? one line each, with what to do
  folio usage --by user            # tokens, model calls and searches per person (cost with a price table)
  folio trace THREAD_LINK          # why each answer of a thread said what it said

run `folio COMMAND --help` for the options of one command.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="folio", description=DESCRIPTION, epilog=EPILOG, formatter_class=HelpFormatter
    )
    parser.add_argument("--env-file", default=".env", help="settings file read besides the environment (default: .env)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `folio` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.settings = _settings_for_logging(args.env_file)
    logs.configure(args.settings, verbose=args.verbose)
    try:
        parse_tags(getattr(args, "tag", None) or [])  # bad input is refused before anything is opened or created
        code = int(args.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the try, rather than at exit
        return code
    except FolioError as exc:
        print(f"folio: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:
        return pipe_closed()


def _settings_for_logging(env_file: str) -> Settings | None:
    """Settings when they can be read; None lets the command itself say what is wrong with them (in one line)."""
    try:
        return load_settings(env_file)
    except ConfigurationError:
        return None


if __name__ == "__main__":
    sys.exit(main())
