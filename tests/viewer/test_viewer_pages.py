"""Issue 35: a citation link opens Folio's viewer: the cited page drawn, the passage highlighted where it stands, and
nothing highlighted (said so) when the passage is not on the page. Removed documents answer 410, tampered links 403."""

from __future__ import annotations

import io
import re
from html import unescape
from pathlib import Path

from PIL import Image

from bot import messages
from bot.app import SAMPLE_CORPUS
from bot.ingest.lifecycle import remove_files
from bot.viewer.html import CONTENT_SECURITY_POLICY
from tests.viewer.site import assert_highlights_exactly, image_url, indexed_site, marks

PDF = "refund_policy_2026.pdf"


async def test_a_pdf_citation_opens_its_page_with_the_passage_highlighted_and_nothing_else(tmp_path: Path) -> None:
    async with indexed_site([SAMPLE_CORPUS / PDF], tmp_path) as site:
        chunk = await site.chunk("annual plans refund pro rata", PDF)
        status, headers, page = await site.view(chunk)
        assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8")
        assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        copy = site.store.stored("office", PDF)
        assert_highlights_exactly(page, copy, chunk.page, chunk.text)
        assert f"Page {chunk.page} of 3" in page and "refund_policy_2026.pdf" in page and "office" in page
        quoted = unescape(re.search(r"<blockquote>(.*?)</blockquote>", page, re.S).group(1))
        assert " ".join(quoted.split()) == " ".join(chunk.text.split())  # the passage as text, for a screen reader
        assert messages.VIEWER_NOT_LOCATED not in page
        assert len(site.links.link_for(chunk).removeprefix(site.base)) < 300  # ten of them fit one Slack message

        status, headers, png = await site.get(image_url(site, page))
        assert (status, headers["Content-Type"]) == (200, "image/png")
        width, height = Image.open(io.BytesIO(png)).size
        assert max(width, height) == 1600 and abs(width / height - 595.28 / 841.89) < 0.01


async def test_a_passage_that_is_not_on_the_page_is_not_highlighted_and_the_page_says_so(tmp_path: Path) -> None:
    async with indexed_site([SAMPLE_CORPUS / PDF], tmp_path) as site:
        chunk = await site.chunk("annual plans refund pro rata", PDF)
        other = 1 if chunk.page != 1 else 2
        status, _, page = await site.view(chunk.model_copy(update={"page": other}))  # right words, wrong page
        assert status == 200
        assert marks(page) == []
        assert messages.VIEWER_NOT_LOCATED in unescape(page)
        invented = chunk.model_copy(update={"text": "Refunds are paid in gold bars to every customer who asks nicely."})
        status, _, page = await site.view(invented)
        assert (status, marks(page)) == (200, [])
        assert messages.VIEWER_NOT_LOCATED in unescape(page)


async def test_previous_next_and_open_the_pdf_are_signed_links_that_work(tmp_path: Path) -> None:
    async with indexed_site([SAMPLE_CORPUS / PDF], tmp_path) as site:
        chunk = (await site.chunk("annual plans refund pro rata", PDF)).model_copy(update={"page": 2})
        _, _, page = await site.view(chunk)
        links = {rel: site.base + unescape(url) for url, rel in re.findall(r'<a href="([^"]+)" rel="(\w+)">', page)}
        assert set(links) == {"prev", "next", "alternate"}
        status, _, previous = await site.get(links["prev"])
        assert status == 200 and "Page 1 of 3" in previous.decode() and 'rel="prev"' not in previous.decode()
        status, _, following = await site.get(links["next"])
        assert status == 200 and "Page 3 of 3" in following.decode() and 'rel="next"' not in following.decode()
        status, headers, pdf = await site.get(links["alternate"].split("#")[0])
        assert (status, headers["Content-Type"]) == (200, "application/pdf") and pdf.startswith(b"%PDF")
        assert links["alternate"].endswith("#page=2")


async def test_a_tampered_link_is_403_and_a_removed_document_410(tmp_path: Path) -> None:
    async with indexed_site([SAMPLE_CORPUS / PDF], tmp_path) as site:
        chunk = await site.chunk("annual plans refund pro rata", PDF)
        url = site.links.link_for(chunk)
        forged = re.sub(r"at=[^&]+", "at=Refunds%20are%20paid%20in%20gold", url)  # other words to highlight
        moved = re.sub(r"page=\d+", "page=3", url)
        bumped = re.sub(r"expires=(\d+)", lambda m: f"expires={int(m.group(1)) + 1}", url)
        unsigned = re.sub(r"&signature=\w+", "", url)
        for bad in (forged, moved, bumped, unsigned, url.replace(f"/office/{PDF}", "/office/..%2F..%2Flink.key")):
            status, _, body = await site.get(bad)
            assert (status, body.decode()) == (403, messages.LINK_REFUSED + "\n"), bad
        status, _, body = await site.get(image_url(site, (await site.view(chunk))[2]).replace("page-", "page-1"))
        assert status == 403

        await remove_files(site.index, site.store, await site.index.files("office"))
        status, _, body = await site.get(url)
        assert status == 410 and body.decode().startswith(f"{PDF} was removed from Folio on 20")
