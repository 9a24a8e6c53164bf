"""`folio doctor [--json]`: one line per part of Folio, whether it is wired right, and what to do when it is not."""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict
from pathlib import Path

from bot.app.doctor import diagnose
from bot.app.verdicts import Check, exit_code
from bot.cli.common import HelpFormatter, settings_from
from bot.errors import ConfigurationError

MANIFEST = "manifest.yaml"
_CHECKOUT = Path(__file__).resolve().parents[2]  # the project folder, when Folio runs from its source
_MARKS = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check that every part is wired right, with what to do when one is not",
        description="Check each part Folio uses: settings, channel policy, index, Redis, the model (per profile), "
        "Azure AI Search, Slack and document links. One line each; parts that are not configured are skipped. "
        "Exits 1 when a part Folio needs is broken.",
        epilog="examples:\n"
        "  folio doctor\n"
        "  folio doctor --json                 # for scripts and CI\n"
        "  folio doctor --manifest deploy/manifest.yaml",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    parser.add_argument(
        "--manifest", type=Path, help=f"the Slack app manifest whose scopes to compare (default: ./{MANIFEST})"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print every part's check; 1 when a needed part is broken."""
    try:
        settings = settings_from(args)
    except ConfigurationError as exc:
        checks = [Check("settings", "fail", str(exc), "fix the variable in the environment or in .env")]
    else:
        checks = asyncio.run(diagnose(settings, manifest=args.manifest or default_manifest()))
    print(as_json(checks) if args.json else as_lines(checks), flush=True)
    return exit_code(checks)


def default_manifest() -> Path | None:
    """./manifest.yaml, else the one beside Folio's source."""
    for folder in (Path.cwd(), _CHECKOUT):
        if (folder / MANIFEST).exists():
            return folder / MANIFEST
    return None


def as_lines(checks: list[Check]) -> str:
    """`FAIL  model (fast)      summary  -> fix`, one line per part."""
    width = max(len(check.part) for check in checks)
    lines = []
    for check in checks:
        fix = f"  -> {check.fix}" if check.fix and check.status != "ok" else ""
        lines.append(f"{_MARKS[check.status]:<4}  {check.part:<{width}}  {check.summary}{fix}")
    return "\n".join(lines)


def as_json(checks: list[Check]) -> str:
    return json.dumps({"ok": exit_code(checks) == 0, "checks": [asdict(check) for check in checks]}, indent=2)
