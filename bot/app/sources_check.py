"""`folio doctor`'s line per source: can it be listed now, and how did its last sync end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.app.verdicts import Check
from bot.config import Settings
from bot.errors import ConfigurationError
from bot.sources.listing import Rclone, SourceUnavailable, default_program, probe
from bot.sources.spec import SourceSpec, load_sources
from bot.sources.state import SyncState
from bot.sources.status import SourceStatus

TIMEOUT = 15.0  # seconds one source's probe may take


async def sources_checks(settings: Settings) -> list[Check]:
    """One Check for the sources file, then one per source it declares."""
    path = settings.folio_sources
    if not path.exists():
        return [Check("sources", "skip", f"no {path}: `folio sync` has nothing to sync (see docs/sources.md)")]
    try:
        sources = load_sources(path)
    except ConfigurationError as exc:
        return [Check("sources", "fail", str(exc), f"fix {path} as the message says")]
    rclone = Rclone(program=settings.folio_rclone or default_program(), timeout=TIMEOUT)
    statuses = _statuses(settings)
    checks = [Check("sources", "ok", f"{path}: {len(sources.sources)} sources")]
    for spec in sources.sources:
        checks.append(await _source_check(spec, path.resolve().parent, rclone, statuses.get(spec.name)))
    return checks


async def _source_check(spec: SourceSpec, base: Path, rclone: Rclone, status: SourceStatus | None) -> Check:
    part = f"source {spec.name}"
    try:
        await asyncio.wait_for(probe(spec, base=base, rclone=rclone), TIMEOUT + 1)
    except (SourceUnavailable, TimeoutError) as exc:
        fix = (
            "check the folder" if spec.remote is None else "check the remote: rclone config, RCLONE_CONFIG_* variables"
        )
        return Check(part, "fail", str(exc) or f"{spec.from_} did not answer in {TIMEOUT:.0f} s", fix)
    if status is None or status.last_run is None:
        return Check(part, "warn", f"{spec.from_} can be listed; never synced", "run `folio sync`")
    if not status.listed:
        return Check(
            part,
            "warn",
            f"{spec.from_} can be listed now; the last sync could not: {status.error}",
            "run `folio sync` again",
        )
    unreadable = f", {status.unreadable} unreadable (folio sources names them)" if status.unreadable else ""
    return Check(part, "ok", f"{spec.from_}: last sync {status.last_run}, {status.files} files{unreadable}")


def _statuses(settings: Settings) -> dict[str, SourceStatus]:
    path = settings.folio_data_dir / "sources" / "state.db"
    if not path.exists():
        return {}
    state = SyncState(path)
    try:
        return state.statuses()
    finally:
        state.close()
