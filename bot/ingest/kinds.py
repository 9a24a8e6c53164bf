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
