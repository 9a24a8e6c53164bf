"""Real documents of every kind, written by the libraries people's tools use (python-docx, python-pptx, openpyxl,
Pillow, the stdlib email package), or by hand where the format is a zip of XML (OpenDocument). Each holds a fact
that no other file holds, so a search for it can only be answered from that file."""

from __future__ import annotations

import zipfile
from email.message import EmailMessage
from pathlib import Path

# A fact found only in one file, and where it stands.
DOCX_FACT = "The parking permit costs 45 euros a month"  # page 2 of report.docx
PPTX_FACT = "Quarterly churn fell to 3.2 percent in the Nordic region"  # slide 2 of deck.pptx
ODT_FACT = "The fire assembly point is the north car park"
SCAN_FACT = "The boiler room key is kept by the caretaker"  # the only page of scan.pdf, an image
HTML_FACT = "Visitors sign in at the reception desk on floor two"
MAIL_FACT = "The Zephyr project kickoff moved to Thursday"
ATTACHED_FACT = "Invoice 7781 is payable within 14 days"  # terms.txt, attached to offer.eml


def docx(path: Path) -> Path:
    from docx import Document
    from docx.enum.text import WD_BREAK

    document = Document()
    document.core_properties.title = "Facilities Report"
    document.add_heading("Facilities Report", level=1)
    document.add_paragraph("The canteen opens at eight in the morning and closes at three.")
    document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    document.add_heading("Parking", level=2)
    document.add_paragraph(f"{DOCX_FACT}, paid at the front desk.")
    document.save(path)
    return path


def pptx(path: Path) -> Path:
    from pptx import Presentation

    deck = Presentation()
    for title, body in (("Quarterly review", "Revenue grew in every region."), ("Churn", f"{PPTX_FACT}.")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(path)
    return path


ORDERS = [  # region, product, units, unit price
    ("North", "Widget", 120, 2.5),
    ("South", "Widget", 80, 2.5),
    ("North", "Gadget", 15, 19.99),
    ("East", "Sprocket", 42, 7.25),
    ("West", "Gadget", 30, 19.99),
]


def xlsx(path: Path) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    orders = book.active
    orders.title = "Orders"
    orders.append(["Region", "Product", "Units", "Unit price"])
    for row in ORDERS:
        orders.append(list(row))
    staff = book.create_sheet("Staff")
    staff.append(["Name", "Desk"])
    staff.append(["Imogen Thwaite", "4.17"])
    book.save(path)
    return path


def odt(path: Path) -> Path:
    """An OpenDocument text written by hand: a zip whose first entry is its (uncompressed) mimetype."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        "<office:body><office:text>"
        '<text:h text:outline-level="1">Safety Notes</text:h>'
        f"<text:p>{ODT_FACT}, beside the bicycle shed.</text:p>"
        "</office:text></office:body></office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
        '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
        archive.writestr("META-INF/manifest.xml", manifest, zipfile.ZIP_DEFLATED)
        archive.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
    return path


def scan(path: Path, lines: tuple[str, ...] = (SCAN_FACT, "on the hook beside the fuse box.")) -> Path:
    """A scanned page: a picture of text, no text layer (what a scanner or a phone app saves)."""
    from PIL import Image, ImageDraw, ImageFont

    page = Image.new("L", (1700, 2200), 255)  # A4-ish at 200 dpi
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=44)
    for number, line in enumerate(lines):
        draw.text((150, 300 + 80 * number), line, fill=0, font=font)
    page.save(path, resolution=200.0)
    return path


def html(path: Path) -> Path:
    path.write_text(
        "<!doctype html><html><head><title>Visitor Guide</title><style>body { color: red }</style>"
        "<script>var secret = 'do not index this script';</script></head><body>"
        "<nav><a href='/'>Home</a></nav><h1>Visitor Guide</h1><h2>Arriving</h2>"
        f"<p>{HTML_FACT}.\n   Badges are returned\n on leaving.</p>"
        "<table><tr><th>Day</th><th>Opens</th></tr><tr><td>Monday</td><td>08:00</td></tr></table>"
        "</body></html>",
        encoding="utf-8",
    )
    return path


def eml(path: Path) -> Path:
    message = EmailMessage()
    message["Subject"] = "Zephyr kickoff"
    message["From"] = "Ada Brennan <ada@example.com>"
    message["To"] = "team@example.com"
    message["Date"] = "Tue, 03 Mar 2026 09:15:00 +0000"
    message.set_content(f"Hello all,\n\n{MAIL_FACT}, same room as before.\n\nAda")
    message.add_attachment(
        f"{ATTACHED_FACT} of receipt.\n".encode(), maintype="text", subtype="plain", filename="terms.txt"
    )
    path.write_bytes(bytes(message))
    return path


def csv(path: Path) -> Path:
    path.write_text("Item;Stock\nStaplers;14\nToner;3\n", encoding="utf-8")
    return path


PICTURE_FACT = "Invoice 4471 from Bramblewood Supplies is due on 15 January"  # receipt.png
TIFF_FACT = "The notice period of the Harbour lease is ninety days"  # page 2 of lease.tif
SIDEWAYS_FACT = "The storeroom alarm code changes every Monday morning"  # sideways.png, scanned turned a quarter


def picture_pages(lines_per_page: list[tuple[str, ...]], *, turn: int = 0, mirror: bool = False) -> list:
    """Pages of printed text as pictures (Pillow images): `turn` degrees anticlockwise, `mirror` flipped left-right
    (a page photographed through the paper)."""
    from PIL import Image, ImageDraw, ImageFont, ImageOps

    pages = []
    for lines in lines_per_page:
        page = Image.new("L", (1700, 2200), 255)
        draw = ImageDraw.Draw(page)
        font = ImageFont.load_default(size=44)
        for number, line in enumerate(lines):
            draw.text((150, 300 + 80 * number), line, fill=0, font=font)
        page = page.rotate(turn, expand=True) if turn else page
        pages.append(ImageOps.mirror(page) if mirror else page)
    return pages


FILLER = (
    "Payment is made by bank transfer to the account named on the order.",
    "Goods remain the property of the seller until paid in full.",
    "Questions about this document go to the accounts office.",
)
