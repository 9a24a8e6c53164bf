"""Which files Folio reads, what each becomes, and which Debian package reads it. Constants and pure functions.

.pdf                      pages (OCR'd where a page has no text layer)
.txt .md .markdown        one text
.docx .doc .odt .rtf      LibreOffice -> canonical PDF `<name>.<ext>.pdf`, pages
.pptx .ppt .odp           LibreOffice -> canonical PDF, one page a slide
.xlsx .xls .ods           tables per sheet (rows with their header), canonical PDF `<name>.<ext>.pdf`
.csv                      one table, the file itself kept
.html .htm                text with headings, kept as `<name>.<ext>.txt`
.eml                      subject, sender, date, body, kept as `<name>.eml.txt`; attachments as their own files
.png .jpg .jpeg .tif .tiff  OCR -> canonical PDF `<name>.<ext>.pdf` (a multi-page TIFF one page a page)

Files an editor or a file browser leaves beside documents (Office's `~$name.docx` owner files, LibreOffice's
`.~lock.name#`, `Thumbs.db`, `.DS_Store`, `desktop.ini`) are never documents: `is_noise` says which.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import PurePath

PDF = frozenset({".pdf"})
TEXT = frozenset({".txt", ".md", ".markdown"})
WRITER = frozenset({".docx", ".doc", ".odt", ".rtf"})
IMPRESS = frozenset({".pptx", ".ppt", ".odp"})
CALC = frozenset({".xlsx", ".xls", ".ods"})
CSV = frozenset({".csv"})
WEB = frozenset({".html", ".htm"})
MAIL = frozenset({".eml"})
PICTURES = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff"})
OFFICE = WRITER | IMPRESS | CALC  # converted by LibreOffice
OOXML = frozenset({".docx", ".xlsx", ".pptx"})  # zip packages; a password-protected one is an OLE file instead
SUPPORTED = PDF | TEXT | OFFICE | CSV | WEB | MAIL | PICTURES
_NOISE_NAMES = frozenset({"thumbs.db", ".ds_store", "desktop.ini"})

# The Debian packages that read each kind (the Dockerfile and `.ci/run` install them).
PACKAGES = {
    **dict.fromkeys(WRITER, "libreoffice-writer-nogui"),
    **dict.fromkeys(IMPRESS, "libreoffice-impress-nogui"),
    **dict.fromkeys(CALC, "libreoffice-calc-nogui"),
}
# The library of each LibreOffice part, beside `soffice` in its program folder: a part whose library is absent is not
# installed (soffice alone then fails with "source file could not be loaded").
LIBREOFFICE_PARTS = {
    **dict.fromkeys(WRITER, "libswlo.so"),
    **dict.fromkeys(IMPRESS, "libsdlo.so"),
    **dict.fromkeys(CALC, "libsclo.so"),
}
OCR_PACKAGES = "ocrmypdf tesseract-ocr tesseract-ocr-eng"
NAME_BYTES = 255  # the longest file name common file systems allow
_ROOM = 16  # kept free in a made name for what follows it: ` (12)` and a stored name's `.pdf`
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")  # control characters (NUL among them) and separators


def suffix(name: str) -> str:
    return PurePath(name).suffix.lower()


def is_noise(name: str) -> bool:
    """Whether `name` is a lock, owner or thumbnail file an editor or file browser leaves beside documents."""
    return name.startswith(("~$", ".~lock.")) or name.lower() in _NOISE_NAMES


def stored_name(name: str) -> str:
    """The name a file is indexed and kept by: Office files and pictures as their canonical PDF (`orders.xlsx.pdf`,
    `receipt.png.pdf`), web pages and mail as their text (`page.html.txt`), every other file as itself. People see
    the name it came with (`models.display_name`)."""
    kind = suffix(name)
    if kind in OFFICE | PICTURES:
        return f"{name}.pdf"
    if kind in WEB | MAIL:
        return f"{name}.txt"
    return name


def tesseract_package(language: str) -> str:
    """The Debian package of one Tesseract language (`deu` -> `tesseract-ocr-deu`, `chi_sim` -> `...-chi-sim`)."""
    return "tesseract-ocr-" + language.lower().replace("_", "-")


def original_name(stored: str) -> str:
    """The name a file had before `stored_name` (`orders.xlsx.pdf` -> `orders.xlsx`)."""
    inner = PurePath(stored).stem
    if (suffix(stored) == ".pdf" and suffix(inner) in OFFICE) or (
        suffix(stored) == ".txt" and suffix(inner) in WEB | MAIL
    ):
        return inner
    return stored


def safe_name(name: str) -> str:
    """`name` as a file name may hold it: no control character or separator, short enough to be stored with a
    number and a stored name's suffix added (cut in its stem, its suffix kept)."""
    cleaned = " ".join(_UNSAFE.sub("", name).split()).strip(". ") or "attachment"
    path = PurePath(cleaned)
    stem, kind = (path.stem, path.suffix) if len(path.suffix.encode()) < _ROOM else (cleaned, "")
    room = NAME_BYTES - _ROOM - len(kind.encode())
    return stem.encode()[:room].decode("utf-8", "ignore").rstrip() + kind


def free_name(name: str, taken: Collection[str]) -> str:
    """`name`'s stored name when free, else the first free one of `stem (2).ext`, `stem (3).ext`, ... (stored names:
    `report (2).docx.pdf`). Deterministic: the same names taken give the same name."""
    number = 1
    while True:
        tried = name if number == 1 else f"{PurePath(name).stem} ({number}){PurePath(name).suffix}"
        if stored_name(tried) not in taken:
            return stored_name(tried)
        number += 1
