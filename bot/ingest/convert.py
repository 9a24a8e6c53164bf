"""LibreOffice in headless mode: one Office file -> the bytes of a PDF (or of an .xlsx, to read a sheet's cells).

Blocking; the pipeline calls it in a worker thread. At most `Converters.jobs` LibreOffice processes run at once in a
process, each with its own user profile (`-env:UserInstallation=file://...`): two LibreOffice processes sharing a
profile fail or hang. A profile is made once per pool slot and reused (a fresh profile costs about two seconds a
file), and removed when the process ends. Every run has a timeout, after which its whole process group is killed.
"""

from __future__ import annotations

import atexit
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot import messages
from bot.errors import MissingConverter, UnreadableFile
from bot.ingest import kinds, offline
from bot.ingest.converters import Converters

_LOCK = threading.Lock()
_POOL: queue.Queue[Path] | None = None
_ROOT: Path | None = None
_OWNER = 0  # the process that made the pool: a forked worker makes its own (profiles are never shared)


def convert(path: Path, target: str, converters: Converters) -> bytes:
    """`path` converted to `target` ("pdf", "xlsx"): its bytes. MissingConverter without LibreOffice,
    UnreadableFile (naming the file and why) when LibreOffice cannot convert it or takes too long."""
    soffice = converters.find(converters.soffice)
    if soffice is None:
        package = kinds.PACKAGES.get(kinds.suffix(path.name), "libreoffice-writer-nogui")
        raise MissingConverter(messages.needs_converter(path.name, "LibreOffice", package))
    with _profile(converters.jobs) as profile, tempfile.TemporaryDirectory(prefix="folio-convert-") as work:
        # A plain name: LibreOffice names its output after the input, and a name starting with `-` is an option.
        given = Path(work) / f"document{kinds.suffix(path.name)}"
        os.symlink(path.resolve(), given)
        out = Path(work) / "out"
        command = [
            *offline.no_network(),
            soffice,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--norestore",
            "--nolockcheck",
            "--convert-to",
            target,
            "--outdir",
            str(out),
            str(given),
        ]
        said = _run(command, path.name, converters.timeout)
        made = out / f"document.{target}"
        if not made.is_file() or made.stat().st_size == 0:
            raise UnreadableFile(messages.conversion_failed(path.name, _why(said)))
        return made.read_bytes()


def _run(command: list[str], name: str, timeout: float) -> str:
    """Run LibreOffice in its own process group; what it said (stderr, else stdout)."""
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=offline.environment(),
    )
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        os.killpg(child.pid, signal.SIGKILL)  # soffice starts soffice.bin: the group, not only the child
        child.communicate()
        raise UnreadableFile(messages.conversion_timeout(name, "LibreOffice", timeout)) from exc
    return (err or "").strip() or (out or "").strip()


def _why(said: str) -> str:
    lines = [line for line in said.splitlines() if line.strip() and "javaldx" not in line]
    if not lines:
        return "it produced no PDF: damaged, protected by a password, or not the type its name says"
    return " ".join(lines[-1].split())[:200]


@contextmanager
def _profile(jobs: int) -> Iterator[Path]:
    """One free profile folder of this process's pool (waiting while `jobs` conversions run)."""
    pool = _pool(max(1, jobs))
    folder = pool.get()
    try:
        yield folder
    finally:
        pool.put(folder)


def _pool(size: int) -> queue.Queue[Path]:
    global _POOL, _ROOT, _OWNER
    with _LOCK:
        if _POOL is None or _ROOT is None or _OWNER != os.getpid() or not _ROOT.exists():
            _OWNER = os.getpid()
            _ROOT = Path(tempfile.mkdtemp(prefix=f"folio-libreoffice-{os.getpid()}-"))
            _POOL = queue.Queue()
            for slot in range(size):
                offline.write_profile(_ROOT / f"profile-{slot}")
                _POOL.put(_ROOT / f"profile-{slot}")
            atexit.register(shutil.rmtree, _ROOT, True)
        return _POOL
