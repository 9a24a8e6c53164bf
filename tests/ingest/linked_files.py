"""Documents that point outside themselves, one of each kind Folio reads, written the way people's tools write them:
a picture inserted with Word's "Link to file" (`a:blip r:link` to an external relationship), INCLUDEPICTURE and
INCLUDETEXT fields, a linked template, OpenDocument's linked `draw:image`, linked sections, floating frames and OLE
objects, Calc's linked sheets and WEBSERVICE, and a web page saved under an Office name (LibreOffice picks its filter
by content). Every link names its own path under `base`, so a listener there tells which one was followed."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

from tests.ingest import made_files

FACT = "The east stairwell is closed for painting"  # in every linked document's own text


def png() -> bytes:
    """A small picture: what a listener answers, and what an embedded picture holds."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def _rewrite(path: Path, changes: dict[str, Callable[[str], str]], extra: dict[str, str] | None = None) -> None:
    """Rewrite some XML parts of a zip document (and add others), keeping every other part as it was."""
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    for name, change in changes.items():
        parts[name] = change(parts[name].decode("utf-8")).encode("utf-8")
    for name, text in (extra or {}).items():
        parts[name] = text.encode("utf-8")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)


def _link_pictures(xml: str) -> str:
    """`<a:blip r:embed=...>` -> `r:link`: what Word writes for a picture inserted with "Link to file"."""
    return xml.replace("r:embed=", "r:link=")


def _external_images(url: str) -> Callable[[str], str]:
    def change(rels: str) -> str:
        return re.sub(r'Target="[^"]*media/[^"]+"', f'Target="{url}" TargetMode="External"', rels)

    return change


def docx(path: Path, base: str) -> Path:
    from docx import Document

    picture = path.with_suffix(".png")
    picture.write_bytes(png())
    document = Document()
    document.add_paragraph(f"{FACT}.")
    document.add_picture(str(picture))
    picture.unlink()
    document.add_paragraph("Before the fields.")
    document.save(path)
    fields = (
        f"<w:p><w:fldSimple w:instr='INCLUDEPICTURE \"{base}/docx/includepicture.png\" \\d'><w:r><w:t>p</w:t></w:r>"
        f"</w:fldSimple></w:p><w:p><w:fldSimple w:instr='INCLUDETEXT \"{base}/docx/includetext.txt\"'>"
        "<w:r><w:t>t</w:t></w:r></w:fldSimple></w:p>"
    )
    template = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rIdT1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
        f'attachedTemplate" Target="{base}/docx/template.dotx" TargetMode="External"/></Relationships>'
    )
    _rewrite(
        path,
        {
            "word/document.xml": lambda xml: _link_pictures(xml).replace("<w:sectPr", fields + "<w:sectPr", 1),
            "word/_rels/document.xml.rels": _external_images(f"{base}/docx/linked-picture.png"),
            "word/settings.xml": lambda xml: re.sub(
                r"(<w:settings[^>]*>)",
                r'\1<w:attachedTemplate xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
                r' r:id="rIdT1"/>',
                xml,
                count=1,
            ),
        },
        {"word/_rels/settings.xml.rels": template},
    )
    return path


def pptx(path: Path, base: str) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Building works"
    slide.placeholders[1].text = f"{FACT}."
    slide.shapes.add_picture(io.BytesIO(png()), Inches(1), Inches(4))
    deck.save(path)
    _rewrite(
        path,
        {
            "ppt/slides/slide1.xml": _link_pictures,
            "ppt/slides/_rels/slide1.xml.rels": _external_images(f"{base}/pptx/linked-picture.png"),
        },
    )
    return path


def xlsx(path: Path, base: str) -> Path:
    from openpyxl import Workbook
    from openpyxl.drawing.image import Image

    book = Workbook()
    sheet = book.active
    sheet.title = "Works"
    sheet.append(["Area", "Note"])
    sheet.append(["East stairwell", f"{FACT}."])
    sheet["C2"] = f'=WEBSERVICE("{base}/xlsx/webservice")'
    sheet.add_image(Image(io.BytesIO(png())), "D4")
    book.save(path)
    _rewrite(
        path,
        {
            "xl/drawings/drawing1.xml": _link_pictures,
            "xl/drawings/_rels/drawing1.xml.rels": _external_images(f"{base}/xlsx/linked-picture.png"),
        },
    )
    return path


_ODF_NAMESPACES = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" '
    'xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.2"'
)


def _picture(url: str) -> str:
    return (
        '<draw:frame svg:width="2cm" svg:height="1.5cm" text:anchor-type="paragraph" svg:x="2cm" svg:y="2cm">'
        f'<draw:image xlink:href="{url}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>'
        "</draw:frame>"
    )


def _odt_body(base: str) -> str:
    return (
        f"<office:text><text:p>{FACT}.</text:p><text:p>{_picture(f'{base}/odt/linked-picture.png')}</text:p>"
        '<text:section text:name="Linked"><text:section-source xlink:href="'
        f'{base}/odt/linked-section.odt" xlink:type="simple"/><text:p>old</text:p></text:section>'
        '<text:p><draw:frame svg:width="4cm" svg:height="3cm" text:anchor-type="paragraph">'
        f'<draw:floating-frame xlink:href="{base}/odt/floating-frame.html" xlink:type="simple" '
        'xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>'
        '<text:p><draw:frame svg:width="4cm" svg:height="3cm" text:anchor-type="paragraph">'
        f'<draw:object xlink:href="{base}/odt/ole-link.ods" xlink:type="simple" xlink:show="embed" '
        'xlink:actuate="onLoad"/></draw:frame></text:p></office:text>'
    )


def _ods_body(base: str) -> str:
    return (
        '<office:spreadsheet><table:table table:name="Works"><table:table-source xlink:type="simple" '
        f'xlink:href="{base}/ods/linked-sheet.ods" table:mode="copy-all"/><table:table-row>'
        f'<table:table-cell office:value-type="string"><text:p>{FACT}.</text:p></table:table-cell>'
        f'<table:table-cell table:formula="of:=WEBSERVICE(&quot;{base}/ods/webservice&quot;)"/>'
        f"<table:table-cell>{_picture(f'{base}/ods/linked-picture.png')}</table:table-cell>"
        "</table:table-row></table:table></office:spreadsheet>"
    )


def _odp_body(base: str) -> str:
    return (
        '<office:presentation><draw:page draw:name="Works" draw:master-page-name="Default">'
        '<draw:frame svg:width="20cm" svg:height="3cm" svg:x="2cm" svg:y="2cm"><draw:text-box>'
        f"<text:p>{FACT}.</text:p></draw:text-box></draw:frame>"
        f"{_picture(f'{base}/odp/linked-picture.png')}</draw:page></office:presentation>"
    )


_ODF = {  # suffix: (mime type, body maker, flat root element's class)
    ".odt": ("application/vnd.oasis.opendocument.text", _odt_body),
    ".ods": ("application/vnd.oasis.opendocument.spreadsheet", _ods_body),
    ".odp": ("application/vnd.oasis.opendocument.presentation", _odp_body),
}


def odf(path: Path, base: str) -> Path:
    """An OpenDocument file (.odt, .ods or .odp) whose pictures, sections, frames and sheets are linked."""
    mime, body = _ODF[path.suffix]
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f"<office:document-content {_ODF_NAMESPACES}><office:body>{body(base)}</office:body>"
        "</office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{mime}"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), mime)
        archive.writestr("META-INF/manifest.xml", manifest, zipfile.ZIP_DEFLATED)
        archive.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
    return path


def flat_odf(path: Path, base: str, *, kind: str) -> Path:
    """A flat (single XML file) OpenDocument of `kind` (".odt", ".ods", ".odp") saved under `path`'s name."""
    mime, body = _ODF[kind]
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<office:document {_ODF_NAMESPACES} office:mimetype="{mime}"><office:body>'
        f"{body(base).replace(f'{base}/{kind[1:]}/', f'{base}/flat{path.suffix}/')}</office:body></office:document>",
        encoding="utf-8",
    )
    return path


def rtf(path: Path, base: str) -> Path:
    path.write_text(
        "{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Helvetica;}}\\f0\\fs24 "
        f"{FACT}.\\par "
        f'{{\\field{{\\*\\fldinst INCLUDEPICTURE "{base}/rtf/includepicture.png" \\\\d}}{{\\fldrslt p}}}}\\par '
        f'{{\\field{{\\*\\fldinst INCLUDETEXT "{base}/rtf/includetext.txt"}}{{\\fldrslt t}}}}\\par }}',
        encoding="ascii",
    )
    return path


def web_page(path: Path, base: str) -> Path:
    """A web page (what a browser's "Save as" or Word's "Web page" writes), under whatever name `path` has."""
    here = f"{base}/html{path.suffix}"
    path.write_text(
        "<!doctype html><html><head><title>Building works</title>"
        f'<link rel="stylesheet" href="{here}/style.css"><script src="{here}/script.js"></script></head>'
        f'<body background="{here}/background.png"><p>{FACT}.</p><img src="{here}/img.png" width="40" height="30">'
        f'<iframe src="{here}/iframe.html"></iframe><object data="{here}/object.png" type="image/png"></object>'
        f'<embed src="{here}/embed.png"><table background="{here}/table.png"><tr><td>cell</td></tr></table>'
        "</body></html>",
        encoding="utf-8",
    )
    return path


def markdown(path: Path, base: str) -> Path:
    path.write_text(f"# Building works\n\n{FACT}.\n\n![plan]({base}/md/picture.png)\n", encoding="utf-8")
    return path


def csv(path: Path, base: str) -> Path:
    path.write_text(f'Area,Note,Link\nEast stairwell,{FACT},"=WEBSERVICE(""{base}/csv/webservice"")"\n')
    return path


def eml(path: Path, base: str) -> Path:
    """A mail whose HTML body draws a remote picture, with a .docx attachment whose picture is linked."""
    message = EmailMessage()
    message["Subject"] = "Building works"
    message["From"] = "Ada Brennan <ada@example.com>"
    message["Date"] = "Tue, 03 Mar 2026 09:15:00 +0000"
    message.set_content(f"{FACT}.")
    message.add_alternative(f'<p>{FACT}.</p><img src="{base}/eml/tracking-pixel.png">', subtype="html")
    attached = docx(path.with_name("attached.docx"), f"{base}/eml-attachment")
    message.add_attachment(
        attached.read_bytes(),
        maintype="application",
        subtype="vnd.openxmlformats-officedocument.wordprocessingml.document",
        filename="works.docx",
    )
    attached.unlink()
    path.write_bytes(bytes(message))
    return path


def scan(path: Path, base: str) -> Path:
    """A scanned page (OCR runs on it) with a link annotation pointing at the listener."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.annotations import Link
    from pypdf.generic import RectangleObject

    picture = made_files.scan(path.with_suffix(".png"), (FACT,))
    from PIL import Image

    Image.open(picture).save(path, resolution=200.0)
    picture.unlink()
    writer = PdfWriter(clone_from=PdfReader(path))
    writer.add_annotation(0, Link(rect=RectangleObject((50, 50, 200, 80)), url=f"{base}/pdf/link"))
    writer.write(path)
    return path


def every_kind(folder: Path, base: str) -> list[Path]:
    """One linking document of every kind Folio reads, plus a web page under each Office name, in `folder`."""
    made = [
        docx(folder / "linked.docx", base),
        pptx(folder / "linked.pptx", base),
        xlsx(folder / "linked.xlsx", base),
        odf(folder / "linked.odt", base),
        odf(folder / "linked.ods", base),
        odf(folder / "linked.odp", base),
        rtf(folder / "linked.rtf", base),
        web_page(folder / "page.html", base),
        markdown(folder / "notes.md", base),
        csv(folder / "works.csv", base),
        eml(folder / "notice.eml", base),
        scan(folder / "scan.pdf", base),
        flat_odf(folder / "flat-text.doc", base, kind=".odt"),
        flat_odf(folder / "flat-sheet.xls", base, kind=".ods"),
        flat_odf(folder / "flat-slides.ppt", base, kind=".odp"),
    ]
    for suffix in (".doc", ".docx", ".odt", ".rtf", ".xls", ".xlsx", ".ods", ".ppt", ".pptx", ".odp"):
        made.append(web_page(folder / f"web-page{suffix}", base))
    return made
