"""What one sync run did with one source: the record `folio sources`, the metrics and doctor read."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

MAX_NAMED = 50  # unreadable files named in a status (all are counted)


class SourceStatus(BaseModel):
    """One source after its last run. `listed` False: the source could not be listed, and `error` says why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    container: str
    last_run: str | None = None  # ISO time, UTC, when the run started
    finished: str | None = None
    listed: bool = False
    error: str = ""
    files: int = 0  # supported files the source holds
    indexed: int = 0  # added, changed or renamed this run
    unchanged: int = 0
    unreadable: int = 0  # files of the source that cannot be read now (known before, or new)
    unreadable_files: tuple[str, ...] = ()  # "path: why", the first MAX_NAMED
    removed: int = 0
    skipped: int = 0  # types Folio does not read, or a converter not installed
    last_success: str | None = None  # the last run that listed the source whole
    next_run: str | None = None  # with `folio sync --every`
    stopped: bool = False  # the run was stopped (SIGTERM) before it finished: removals wait for the next run

    @property
    def ok(self) -> bool:
        return self.listed and not self.error
