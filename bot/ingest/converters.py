"""The outside programs that read what Python cannot: LibreOffice (Office files), OCRmyPDF and Tesseract (scans).

`Converters` is the value a run carries (paths, OCR mode, languages, timeout, pool size); `probe` asks each program
for its version, for `folio doctor`. A program that is not there is never an error here: the file it would read is
skipped with the package to install (see `missing`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.ingest import kinds

OcrMode = Literal["auto", "off", "force"]
PROBE_SECONDS = 20.0


@dataclass(frozen=True, kw_only=True)
class Converters:
    """How one indexing run converts and OCRs (FOLIO_SOFFICE, FOLIO_OCRMYPDF, FOLIO_TESSERACT, --ocr, ...)."""

    soffice: str = "soffice"
    ocrmypdf: str = "ocrmypdf"
    tesseract: str = "tesseract"
    ocr: OcrMode = "auto"
    languages: str = "eng"  # Tesseract's form: eng+deu
    timeout: float = 300.0  # seconds one file may take in one program
    jobs: int = 2  # LibreOffice processes at once (each with its own profile)
    unpacked_mb: float = 256.0  # an Office package that unpacks to more is refused unopened (bot/ingest/packages.py)

    def find(self, program: str) -> str | None:
        """The full path of `program` (a name on PATH or a path), or None when it is not there."""
        return shutil.which(program)

    def missing(self, name: str) -> str | None:
        """The Debian package to install when the program that reads `name` is not there, else None: LibreOffice
        itself, or its part for this kind (Debian splits Writer, Calc and Impress into packages of their own)."""
        kind = kinds.suffix(name)
        package = kinds.PACKAGES.get(kind)
        soffice = self.find(self.soffice)
        if package is None or soffice is None:
            return package
        program = Path(os.path.realpath(soffice)).parent
        parts = {program / library for library in kinds.LIBREOFFICE_PARTS.values()}
        # Only where the parts lie beside soffice (Debian's layout) can their absence be told.
        if any(part.exists() for part in parts) and not (program / kinds.LIBREOFFICE_PARTS[kind]).exists():
            return package
        return None

    def ocr_ready(self) -> bool:
        """Whether OCRmyPDF and Tesseract are both there."""
        return bool(self.find(self.ocrmypdf) and self.find(self.tesseract))

    def ocr_on(self) -> bool:
        """`auto` OCRs when the programs are there; `force` always tries (and says what is missing)."""
        return self.ocr == "force" or (self.ocr == "auto" and self.ocr_ready())


@dataclass(frozen=True)
class Probe:
    """One program as `folio doctor` shows it."""

    name: str
    path: str | None  # None: not installed
    version: str = ""
    problem: str = ""  # why it did not answer


def probe(program: str, name: str, version_args: tuple[str, ...] = ("--version",)) -> Probe:
    """Run `program --version` (cached per binary and its modification time: doctor asks often in tests)."""
    path = shutil.which(program)
    if path is None:
        return Probe(name, None)
    return _version(path, os.stat(path).st_mtime, name, version_args)


@functools.lru_cache(maxsize=16)
def _version(path: str, _mtime: float, name: str, args: tuple[str, ...]) -> Probe:
    try:
        done = subprocess.run([path, *args], capture_output=True, text=True, timeout=PROBE_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe(name, path, problem=str(exc) or type(exc).__name__)
    lines = (done.stdout or done.stderr).strip().splitlines()
    if done.returncode != 0 or not lines:
        return Probe(name, path, problem=f"exit {done.returncode}: {' '.join(lines[-1:])[:200]}")
    version = lines[0].strip()  # "LibreOffice 7.4.7.2 40(Build:2)", "tesseract 5.3.0", "14.0.1"
    if version.lower().startswith(name.lower()):
        version = version[len(name) :].strip()
    return Probe(name, path, version=version)


def tesseract_languages(tesseract: str) -> tuple[str, ...]:
    """The languages Tesseract has data for (`osd`, orientation detection, left out); empty when it is missing."""
    path = shutil.which(tesseract)
    if path is None:
        return ()
    try:
        done = subprocess.run(
            [path, "--list-langs"], capture_output=True, text=True, timeout=PROBE_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    lines = done.stdout.strip().splitlines()[1:]  # the first line says where the data lives
    return tuple(line.strip() for line in lines if line.strip() and line.strip() != "osd")
