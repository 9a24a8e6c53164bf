"""`folio bench` (in progress)."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="measure Folio under load (needs the source checkout)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    print("folio bench is not ready yet.")
    return 2
