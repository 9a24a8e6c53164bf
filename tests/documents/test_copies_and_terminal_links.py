"""Folio keeps its own copy of every indexed file, and terminal answers link to that copy at the cited page."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from bot.app import SAMPLE_CORPUS
from bot.app.builders import links
from bot.cli import main
from bot.config import Settings
from bot.models import Chunk

COPIES = Path(".folio/documents")  # tests run in an empty folder: the default FOLIO_DATA_DIR is .folio


def index(path: Path, container: str = "benefits") -> str:
    assert main(["index", str(path), "--container", container]) == 0
    return container


def test_the_copy_is_kept_on_index_survives_the_source_and_is_replaced_on_reindex(
    shared_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "incoming" / "plan.pdf"
    source.parent.mkdir()
    first, second = shared_dir / "corpus" / "PerksPlus.pdf", shared_dir / "corpus" / "Benefit_Options.pdf"
    shutil.copyfile(first, source)
    index(source)
    capsys.readouterr()
    assert (COPIES / "benefits" / "plan.pdf").read_bytes() == first.read_bytes()

    shutil.copyfile(second, source)  # same name, new content: indexed again and the copy follows
    index(source)
    assert "1 file indexed" in capsys.readouterr().out
    assert (COPIES / "benefits" / "plan.pdf").read_bytes() == second.read_bytes()

    (COPIES / "benefits" / "plan.pdf").unlink()  # an index made before copies were kept gets them on the next run
    index(source)
    assert "1 unchanged" in capsys.readouterr().out
    assert (COPIES / "benefits" / "plan.pdf").read_bytes() == second.read_bytes()

    source.unlink()  # the source moved away: the copy stays
    assert (COPIES / "benefits" / "plan.pdf").is_file()
    assert list((COPIES / "benefits").iterdir()) == [COPIES / "benefits" / "plan.pdf"]  # no temporary files


def test_folio_ask_json_on_the_sample_links_each_citation_to_the_copy_at_its_page(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ask", "What is the refund window for monthly plans?", "--json"]) == 0
    citations = json.loads(capsys.readouterr().out)["citations"]
    assert citations
    for citation in citations:
        url = urlsplit(citation["url"])
        assert (url.scheme, url.fragment) == ("file", f"page={citation['page']}")
        copy = Path(unquote(url.path))
        assert copy == (COPIES / "sample" / citation["file"]).resolve()
        assert copy.read_bytes() == (SAMPLE_CORPUS / citation["file"]).read_bytes()
        assert copy.read_bytes().startswith(b"%PDF")


def chunk(file: str, *, page: int | None, tabular: bool = False, container: str = "sample") -> Chunk:
    return Chunk(id="x", file=file, page=page, container=container, text="t", tabular=tabular)


def test_tables_get_no_page_a_file_without_a_copy_no_link_and_docs_base_url_wins(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["search", "expenses", "--json"]) == 0  # indexes the sample and keeps its copies
    capsys.readouterr()
    link_for = links(Settings(), file_links=True).link_for
    assert link_for(chunk("expenses.xlsx.pdf", page=1, tabular=True)).endswith("/sample/expenses.xlsx.pdf")
    assert link_for(chunk("refund_policy_2025.pdf", page=2)).endswith("/sample/refund_policy_2025.pdf#page=2")
    assert link_for(chunk("never_indexed.pdf", page=2)) is None
    assert link_for(chunk("refund_policy_2025.pdf", page=2, container="other")) is None

    hosted = links(Settings(folio_docs_base_url="https://files.example/docs"), file_links=True).link_for
    assert hosted(chunk("refund_policy_2025.pdf", page=2)) == "https://files.example/docs/refund_policy_2025.pdf#page=2"

    signed = links(Settings(folio_public_url="https://folio.example/"), file_links=True).link_for
    url = signed(chunk("refund_policy_2025.pdf", page=2))
    assert url.startswith("https://folio.example/view/sample/refund_policy_2025.pdf?expires=")
    assert "&page=2&" in url  # the viewer opens at the cited page, with the passage to highlight
    assert signed(chunk("never_indexed.pdf", page=2)) is None
    expires = int(url.split("expires=")[1].split("&")[0])
    assert abs(expires - (time.time() + 30 * 86400)) < 600  # FOLIO_LINK_TTL_DAYS defaults to 30 days
    short = links(Settings(folio_public_url="https://folio.example", folio_link_ttl_days=1), file_links=True).link_for
    expires = int(short(chunk("refund_policy_2025.pdf", page=2)).split("expires=")[1].split("&")[0])
    assert abs(expires - (time.time() + 86400)) < 600


async def test_deleting_a_copy_removes_its_link(tmp_path: Path) -> None:
    from bot.documents import DocumentStore

    source = tmp_path / "a.pdf"
    source.write_bytes(b"%PDF-1.4 a")
    store = DocumentStore(tmp_path / "documents")
    assert await store.keep("hr", "a.pdf", source)
    assert await store.keep("hr", "../a.pdf", source) is False  # refused, never written outside the folder
    await store.delete("hr", "a.pdf")
    await store.delete("hr", "a.pdf")  # deleting twice is fine
    assert store.stored("hr", "a.pdf") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pdf", "documents"]
