"""OCRmyPDF with Tesseract: a PDF whose pages have no text layer, or a picture -> a PDF with one (the canonical copy).

Blocking; called in a worker thread. `--skip-text` OCRs only the pages without text (`--ocr auto`); `--ocr force`
rasterises and OCRs every page (`--force-ocr`), for scans that carry a little text such as a stamp.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path

from pypdf import PageObject, PdfReader
from pypdf.errors import PyPdfError

from bot import messages
from bot.errors import MissingConverter, UnreadableFile
from bot.ingest import kinds, offline
from bot.ingest.converters import Converters

# "OCR engine does not have language data for the following requested languages: \ndeu\nfra\nNote: ..."
PAGE_SECONDS = 20.0  # OCR time allowed per page on top of FOLIO_CONVERT_TIMEOUT (about 2 s a page measured)
PICTURE_PAGE_BYTES = 1_000_000  # for a picture's timeout: about one scanned page a megabyte
ASSUMED_DPI = 300  # a picture without resolution metadata: OCRmyPDF needs one to size the page
# Pages are turned upright before OCR (Tesseract's orientation detection). OCRmyPDF's default threshold (14) leaves a
# short sideways scan (a receipt of three lines scores about 5) unturned and OCR'd as garbage; a page OSD finds
# upright is never turned, whatever the threshold.
ROTATE = ("--rotate-pages", "--rotate-pages-threshold", "4")
_MISSING_LANGUAGE = re.compile(
    r"language data for the following requested languages:(.*?)(?:^Note|\Z)", re.IGNORECASE | re.DOTALL | re.MULTILINE
)


def pages_with_pictures(path: Path, numbers: list[int]) -> set[int]:
    """Which of the pages `numbers` (1-based) draw a picture (an image or form XObject): a page without text that
    draws none is blank, and OCR would find nothing on it. Unsure (a damaged file): every one of them."""
    try:
        pages = PdfReader(path).pages
        return {number for number in numbers if _draws_objects(pages[number - 1])}
    except (PyPdfError, ValueError, KeyError, TypeError, IndexError, AttributeError, OSError):
        return set(numbers)


def _draws_objects(page: PageObject) -> bool:
    resources = page.get("/Resources")
    objects = resources.get_object().get("/XObject") if resources is not None else None
    return bool(objects is not None and objects.get_object())


def ocr_pdf(path: Path, name: str, converters: Converters, *, pages: int = 1) -> bytes:
    """The bytes of `path` with a text layer on every page that had none (every page with `--ocr force`); it may
    take FOLIO_CONVERT_TIMEOUT plus PAGE_SECONDS for each of the `pages` it OCRs."""
    mode = "--force-ocr" if converters.ocr == "force" else "--skip-text"
    return _ocrmypdf(path, name, converters, pages=pages, options=(mode,))


def ocr_picture(path: Path, name: str, converters: Converters) -> bytes:
    """A picture (PNG, JPEG, TIFF; each page of a multi-page TIFF) as a PDF with a text layer. A picture that does
    not say its resolution (most screenshots) is taken as a 300 dpi scan, as OCRmyPDF asks."""
    pages = max(1, path.stat().st_size // PICTURE_PAGE_BYTES)  # a TIFF's page count is unknown until it is read
    try:
        return _ocrmypdf(path, name, converters, pages=pages, options=())
    except _NoResolution:
        return _ocrmypdf(path, name, converters, pages=pages, options=("--image-dpi", str(ASSUMED_DPI)))


class _NoResolution(Exception):
    """OCRmyPDF refused a picture that carries no DPI."""


def _ocrmypdf(path: Path, name: str, converters: Converters, *, pages: int, options: tuple[str, ...]) -> bytes:
    program = converters.find(converters.ocrmypdf)
    if program is None or converters.find(converters.tesseract) is None:
        raise MissingConverter(messages.needs_converter(name, "OCRmyPDF and Tesseract", kinds.OCR_PACKAGES))
    timeout = converters.timeout + PAGE_SECONDS * max(pages, 1)  # a long scan is no stuck one
    with tempfile.TemporaryDirectory(prefix="folio-ocr-") as work:
        out = Path(work) / "ocr.pdf"
        command = [
            *offline.no_network(),
            program,
            *options,
            "-l",
            converters.languages,
            *ROTATE,
            "--output-type",
            "pdf",
            "--optimize",
            "0",
            "--jobs",
            str(max(1, converters.jobs)),
            "--quiet",
            str(path),
            str(out),
        ]
        child = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            env=offline.environment(),
        )
        try:
            _, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            os.killpg(child.pid, signal.SIGKILL)  # OCRmyPDF runs Tesseract and Ghostscript as children
            child.communicate()
            raise UnreadableFile(messages.conversion_timeout(name, "OCR", timeout)) from exc
        if child.returncode != 0 or not out.is_file():
            if "DpiError" in (err or "") and "--image-dpi" not in options:
                raise _NoResolution
            raise _failure(name, err or "", child.returncode)
        return out.read_bytes()


def _failure(name: str, said: str, code: int) -> UnreadableFile:
    languages = _MISSING_LANGUAGE.search(said)
    if languages:
        wanted = [word for word in re.split(r"[\s,+]+", languages.group(1)) if word.isidentifier()]
        packages = " ".join(kinds.tesseract_package(language) for language in wanted)
        return MissingConverter(messages.needs_converter(name, "Tesseract language data", packages))
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    # OCRmyPDF names the error class ("InputFileError: ...") and may add advice about Docker after it.
    named = [line for line in lines if re.match(r"^\w*Error\b", line)]
    why = (named or lines[:1] or [f"exit {code}"])[0]
    return UnreadableFile(messages.ocr_failed(name, why[:200]))
