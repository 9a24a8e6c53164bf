"""`folio serve`: its options, and the sockets it listens on, opened before anything slow.

A start spends most of its time importing Folio (about 1 s of CPU; several on a busy machine), then starting or
reaching Redis, opening the index and asking Slack who it is (benchmarks/restart.py, benchmarks/startup.py). The port
is opened first, before those imports: from then on Slack's deliveries wait in the kernel's queue instead of being
refused, and are answered (recorded in the durable intake and acked) as soon as the server runs, well inside the 3 s
Slack waits. Only then is the rest of `folio serve` (bot.cli.serve) imported.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import TextIO

from bot import messages
from bot.cli.common import HelpFormatter, settings_from
from bot.errors import ConfigurationError, InvalidInput
from bot.ports import EVENTS_PATH, Listeners


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run Folio in Slack (a terminal chat when Slack is not configured)",
        description="Serve Slack: Socket Mode when SLACK_APP_TOKEN is set, else HTTP events on PORT at "
        f"{EVENTS_PATH}. Without SLACK_BOT_TOKEN, chat in the terminal instead.",
        epilog="examples:\n"
        "  folio serve                         # settings from the environment and .env\n"
        "  PORT=8080 folio serve --host 127.0.0.1\n"
        "  folio serve --workers 2             # two processes on one port, one Redis; SIGTERM drains both\n"
        "  kill -HUP <pid of folio serve>      # --workers N: new workers start, then the old ones drain\n"
        "see docs/slack-admins.md, 'Connect to Slack', for the tokens and the app manifest; docs/operations.md for restarts.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--host", default="0.0.0.0", help="HTTP interface to listen on (default: all)")
    parser.add_argument("--port", type=port_number, help="HTTP port (default: $PORT, else 3000)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes sharing the port (or N Socket Mode connections), one Redis between them; "
        "a worker that dies is replaced; SIGTERM lets each finish its running turns, SIGHUP "
        "starts new workers before the old ones stop (default 1)",
    )
    parser.add_argument("--worker-ready", type=int, help=argparse.SUPPRESS)  # a worker's pipe to its parent
    parser.add_argument("--listen-fds", help=argparse.SUPPRESS)  # a worker's sockets from its parent (bot.ports)
    parser.add_argument("--worker-number", type=int, default=1, help=argparse.SUPPRESS)  # 1: says start-up warnings
    parser.set_defaults(run=run)


def port_number(text: str) -> int:
    """--port's value: 0 (any free port) to 65535, else a usage error rather than a traceback from bind()."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port number (0-65535)")
    return port


def _nobody_to_chat_with(stdin: TextIO | None) -> bool:
    """Whether the terminal chat would end at once with nobody having typed: no stdin, or /dev/null (a container
    started without -i, a systemd unit). Exiting 0 there only has a supervisor start Folio again, saying nothing."""
    if stdin is None:
        return True
    try:
        fd = stdin.fileno()
    except (OSError, ValueError):  # an in-memory stream (tests): someone gives it input
        return False
    if os.isatty(fd):
        return False
    return stat.S_ISCHR(os.fstat(fd).st_mode)  # a character device that is not a terminal: /dev/null


def run(args: argparse.Namespace) -> int:
    """Listen first (or take the sockets a `--workers N` parent passed), then load and run the rest of `folio serve`."""
    settings = settings_from(args)
    if not settings.slack_configured:
        if _nobody_to_chat_with(sys.stdin):
            raise ConfigurationError(messages.SLACK_NOT_CONFIGURED_NO_TERMINAL)
        print(messages.SLACK_NOT_CONFIGURED, flush=True)
        from bot.cli.chat import chat  # loaded only for the terminal chat

        return chat(settings)
    port = settings.port if args.port is None else args.port
    if args.workers < 1:
        raise InvalidInput("--workers must be 1 or more.")
    if args.worker_ready is not None:  # one of the workers `supervise` started: its parent listens
        listeners = Listeners.inherited(args.listen_fds or "-,-")
    else:
        listeners = Listeners.open(settings, host=args.host, port=port)  # deliveries wait in its queue from now on
    try:
        # Loaded after the sockets listen: these imports are most of a start (the module docstring says why).
        from bot.cli import serve

        return serve.main(args, settings, port=port, listeners=listeners)
    finally:
        listeners.close()  # closed already when a server ran on them; not when the start failed before
