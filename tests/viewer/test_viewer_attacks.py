"""The viewer as an attacker meets it: names that climb out of the documents folder, forged fields, page numbers
past any document, pages and pictures that would decode to gigabytes, and documents that carry markup."""

from __future__ import annotations

import io
import re
import time
import zlib
from pathlib import Path

import pytest
from PIL import Image

from bot import messages
from bot.app import SAMPLE_CORPUS
from bot.viewer.links import Cited, image_path, view_path
from bot.viewer.pages import LONG_SIDE
from bot.viewer.passage import anchors_of
from tests.viewer.site import KEY, image_url, indexed_site, soon

PDF = "refund_policy_2026.pdf"


def pdf_with(page: bytes, extra: list[bytes] | None = None) -> bytes:
    """A one-page PDF whose page dictionary is `page`, objects numbered from 4 on in `extra`."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page, *(extra or [])]
    out, offsets = io.BytesIO(b"%PDF-1.7\n"), []
    out.seek(0, 2)
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    table = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % offset for offset in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, table))
    return out.getvalue()


async def test_names_outside_the_documents_folder_are_refused_even_when_signed(tmp_path: Path) -> None:
    async with indexed_site([SAMPLE_CORPUS / PDF], tmp_path) as site:
        (tmp_path / "documents" / "secret.txt").write_text("not a kept copy")
        for container, file in (
            (".", "link.key"),
            ("..", "index.sqlite"),
            ("office", "../secret.txt"),
            (".removed", PDF),
            (".pages", "office"),
            ("office", ".."),
        ):
            url = site.base + view_path(KEY, container, file, expires=soon(), cited=Cited(page=1))
            status, _, body = await site.get(url)
            assert status in (403, 404) and body.decode() in (
                messages.LINK_REFUSED + "\n",
                messages.DOCUMENT_GONE + "\n",
            ), (container, file)


async def test_forged_fields_expired_links_and_page_numbers_past_the_document(tmp_path: Path) -> None:
    async with indexed_site([SAMPLE_CORPUS / PDF], tmp_path) as site:
        chunk = await site.chunk("annual plans refund pro rata", PDF)
        url = site.links.link_for(chunk)
        for forged in (
            url + "&sheet=Invoices&rows=1-9",
            url.replace("&n=", "&n=9"),
            url + "&page=1",
            re.sub(r"page=\d+", "page=99999999999", url),
            url.replace("expires=", "expires=0"),
        ):
            status, _, _ = await site.get(forged)
            assert status == 403, forged
        expired = site.base + view_path(KEY, "office", PDF, expires=int(time.time()) - 1, cited=Cited(page=1))
        assert (await site.get(expired))[0] == 403

        beyond = site.base + view_path(KEY, "office", PDF, expires=soon(), cited=Cited(page=100_000))
        status, _, body = await site.get(beyond)
        assert (status, body.decode()) == (404, messages.viewer_no_page(100_000, 3) + "\n")
        picture = site.base + image_path(KEY, "office", PDF, expires=soon(), page=999_999)
        assert (await site.get(picture))[0] == 404
        status, _, _ = await site.get(site.base + f"/view/office/{PDF}/page-{'9' * 40}.png?expires=1&signature=0")
        assert status == 404  # not even parsed as a page: the route takes six digits at most


@pytest.mark.slow  # runs a converter or a program
async def test_a_giant_page_is_drawn_small_and_a_picture_claiming_gigapixels_is_not_decoded(tmp_path: Path) -> None:
    giant = tmp_path / "giant.pdf"
    giant.write_bytes(
        pdf_with(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 14400 14400] /Contents 4 0 R >>",
            [b"<< /Length 44 >>\nstream\nBT /F1 12 Tf 72 72 Td (Giant page text) Tj ET\nendstream"],
        )
    )
    row = zlib.compress(b"\xff" * 4096)
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(
        pdf_with(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 5 0 R >> >>"
            b" /Contents 4 0 R >>",
            [
                b"<< /Length 31 >>\nstream\nq 612 0 0 792 0 0 cm /Im0 Do Q\nendstream",
                b"<< /Type /XObject /Subtype /Image /Width 60000 /Height 60000 /ColorSpace /DeviceGray /BitsPerComponent 8"
                b" /Filter /FlateDecode /Length %d >>\nstream\n" % len(row) + row + b"\nendstream",
            ],
        )
    )
    async with indexed_site([giant, bomb], tmp_path / "data") as site:
        for name, expected in (("giant.pdf", 200), ("bomb.pdf", 413)):
            assert await site.store.keep("office", name, tmp_path / name)  # kept even when indexing found no text
            started = time.monotonic()
            url = site.base + image_path(KEY, "office", name, expires=soon(), page=1)
            status, _, body = await site.get(url)
            assert (status, time.monotonic() - started < 10) == (expected, True), name
            if expected == 200:
                assert Image.open(io.BytesIO(body)).size == (LONG_SIDE, LONG_SIDE)
            else:
                assert body.decode() == messages.VIEWER_PAGE_TOO_LARGE + "\n"


async def test_markup_in_a_document_or_its_name_is_shown_as_text_under_a_strict_policy(tmp_path: Path) -> None:
    name = '"><img src=x onerror=alert(1)>.md'
    (tmp_path / name).write_text("<script>alert('from the document')</script> The canteen closes at three on Fridays.")
    async with indexed_site([tmp_path / name], tmp_path / "data") as site:
        chunk = await site.chunk("canteen closes Fridays", name)
        status, headers, page = await site.view(chunk)
    assert status == 200
    policy = headers["Content-Security-Policy"]
    assert policy.startswith("default-src 'none'; img-src 'self';") and "script-src" not in policy
    assert "frame-ancestors 'none'" in policy and "'unsafe-inline'" not in policy.split("style-src-attr")[0]
    assert "<script" not in page and "<img src=x" not in page and "&lt;script&gt;" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing from elsewhere


async def test_a_passage_link_to_a_page_image_shares_nothing_with_the_view_signature(tmp_path: Path) -> None:
    async with indexed_site([SAMPLE_CORPUS / PDF], tmp_path) as site:
        chunk = await site.chunk("annual plans refund pro rata", PDF)
        _, _, page = await site.view(chunk)
        image = image_url(site, page)
        signature = re.search(r"signature=(\w+)", image).group(1)  # type: ignore[union-attr]
        cited = Cited(page=chunk.page, anchors=anchors_of(chunk.text))
        view = site.base + view_path(KEY, "office", PDF, expires=soon(), cited=cited)
        reused = re.sub(r"signature=\w+", f"signature={signature}", view)
        assert (await site.get(reused))[0] == 403
