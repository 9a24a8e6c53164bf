"""Issue 35: every kind of document opens in the viewer with its passage marked: Word and PowerPoint through their
converted PDFs, a scan through its OCR text layer (slow: LibreOffice and OCRmyPDF run for real), and mail, web pages,
Markdown and text as their kept text."""

from __future__ import annotations

import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from bot import messages
from tests.ingest import made_files
from tests.viewer.site import assert_highlights_exactly, indexed_site, marks

NEEDS = {
    "soffice": "LibreOffice is not installed (apt-get install libreoffice-writer-nogui libreoffice-impress-nogui)",
    "ocrmypdf": "OCRmyPDF is not installed (apt-get install ocrmypdf tesseract-ocr tesseract-ocr-eng)",
}
MARKDOWN = "# Travel\n\nBook trains through the portal.\n\n## Hotels\n\nHotel stays up to 140 euros a night are paid by the company card.\n"


def marked(page: str) -> str:
    found = re.search(r'<mark id="cited">(.*?)</mark>', page, re.S)
    return unescape(found.group(1)) if found else ""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make", "name", "question", "fact"),
    [
        (made_files.docx, "report.docx", "parking permit cost", made_files.DOCX_FACT),
        (made_files.pptx, "deck.pptx", "quarterly churn Nordic", made_files.PPTX_FACT),
        (made_files.scan, "scan.pdf", "boiler room key caretaker", made_files.SCAN_FACT),
    ],
)
async def test_converted_and_scanned_pages_highlight_exactly_their_passage(
    tmp_path: Path, make: object, name: str, question: str, fact: str
) -> None:
    for program, why in NEEDS.items():
        if shutil.which(program) is None:
            pytest.skip(why)
    source = make(tmp_path / name)  # type: ignore[operator]
    async with indexed_site([source], tmp_path / "data") as site:
        kept = name if name.endswith(".pdf") else f"{name}.pdf"
        chunk = await site.chunk(question, kept)
        assert fact.split()[1] in chunk.text
        status, _, page = await site.view(chunk)
        assert status == 200
        assert_highlights_exactly(page, site.store.stored("office", kept), chunk.page, chunk.text)
        assert messages.VIEWER_NOT_LOCATED not in unescape(page)


@pytest.mark.parametrize(
    ("name", "write", "question", "kept"),
    [
        ("travel.md", lambda path: path.write_text(MARKDOWN), "hotel stays euros", "travel.md"),
        ("guide.html", made_files.html, "visitors sign in reception", "guide.html.txt"),
        ("offer.eml", made_files.eml, "Zephyr kickoff moved", "offer.eml.txt"),
    ],
)
async def test_text_kinds_show_their_kept_text_with_the_passage_marked(
    tmp_path: Path, name: str, write: object, question: str, kept: str
) -> None:
    write(tmp_path / name)  # type: ignore[operator]
    async with indexed_site([tmp_path / name], tmp_path / "data") as site:
        chunk = await site.chunk(question, kept)
        status, headers, page = await site.view(chunk)
        assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8")
        assert " ".join(marked(page).split()) == " ".join(chunk.text.split())
        assert marks(page) == [] and "<img" not in page  # no page image for a text
        assert name in unescape(page) and messages.VIEWER_OPEN_FILE in page
        invented = chunk.model_copy(update={"text": "Nothing like this sentence is written anywhere in that file."})
        _, _, page = await site.view(invented)
        assert marked(page) == "" and messages.VIEWER_NOT_LOCATED_TEXT in unescape(page)
