"""Ingestion: real PDFs (made with fpdf2) -> page-numbered chunks in a real local index."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from fpdf import FPDF

from bot.errors import InvalidInput
from bot.ingest import IndexOptions, collect_files, index_files
from bot.ingest.chunking import bridge, split_page
from bot.models import Scope, Tag
from bot.retrieval.local import LocalRetriever

FILLER = "This paragraph is ordinary filler text about office routines and general matters. " * 12


def make_pdf(path: Path, pages: list[str], *, created: datetime | None = None, password: str | None = None) -> Path:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    if created:
        pdf.set_creation_date(created)
    if password:
        pdf.set_encryption(owner_password="owner", user_password=password)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    pdf.output(str(path))
    return path


@pytest.fixture
async def index(tmp_path: Path) -> AsyncIterator[LocalRetriever]:
    retriever = LocalRetriever(tmp_path / "index.sqlite", score_gap=0.0)
    yield retriever
    await retriever.close()


async def test_every_chunk_keeps_the_page_its_words_are_on(tmp_path: Path, index: LocalRetriever) -> None:
    pages = [f"Section {n}. {FILLER} The secret code of this page is zebra{n}quartz. {FILLER}" for n in range(1, 6)]
    pdf = make_pdf(tmp_path / "Travel_Policy.pdf", pages)
    report = await index_files([pdf], index, IndexOptions(container="hr", tags=(Tag(key="year", value="2025"),)))
    assert (report.files, report.pages, report.unchanged, report.failed) == (1, 5, 0, [])
    assert report.chunks > 5  # long pages are split, yet every piece keeps its page
    for n in range(1, 6):
        [hit] = (await index.search(f"zebra{n}quartz", Scope(container="hr"), top=3))[:1]
        assert (hit.file, hit.page) == ("Travel_Policy.pdf", n)
        assert hit.tags == (Tag(key="year", value="2025"),)
        assert hit.context.startswith("Travel Policy")


async def test_a_converted_spreadsheet_keeps_its_name_and_is_tabular(tmp_path: Path, index: LocalRetriever) -> None:
    pdf = make_pdf(tmp_path / "orders.xlsx.pdf", ["Order 1001 Acme widgets 12 units"])
    await index_files([pdf], index, IndexOptions(container="sales"))
    [hit] = await index.search("widgets", Scope(container="sales"), top=3)
    assert hit.file == "orders.xlsx.pdf" and hit.tabular and hit.page == 1
    report = make_pdf(tmp_path / "report.docx.pdf", ["Quarterly widgets report"])
    await index_files([report], index, IndexOptions(container="sales"))
    assert not [h for h in await index.search("quarterly", Scope(container="sales"), top=3) if h.tabular]


async def test_text_and_markdown_are_indexed_without_pages(tmp_path: Path, index: LocalRetriever) -> None:
    (tmp_path / "notes.md").write_text("# Onboarding\n\nNew starters get a laptop on day one.", encoding="utf-8")
    (tmp_path / "faq.txt").write_text("The canteen opens at eight.", encoding="utf-8")
    report = await index_files(collect_files([tmp_path]).files, index, IndexOptions(container="hr"))
    assert report.files == 2 and not report.failed
    [hit] = await index.search("laptop", Scope(container="hr"), top=3)
    assert hit.file == "notes.md" and hit.page is None


async def test_unchanged_files_are_skipped_and_changed_ones_replaced(tmp_path: Path, index: LocalRetriever) -> None:
    pdf = make_pdf(tmp_path / "policy.pdf", ["Refunds within 30 days.", "Contact billing."])
    assert (await index_files([pdf], index, IndexOptions(container="c"))).files == 1
    again = await index_files([pdf], index, IndexOptions(container="c"))
    assert (again.files, again.unchanged) == (0, 1)
    make_pdf(pdf, ["Refunds within 14 days only."])
    changed = await index_files([pdf], index, IndexOptions(container="c"))
    assert (changed.files, changed.pages) == (1, 1)
    assert await index.search("billing", Scope(container="c"), top=3) == []  # page 2 of the old version is gone
    [hit] = await index.search("refunds", Scope(container="c"), top=3)
    assert "14 days" in hit.text
    retagged = await index_files([pdf], index, IndexOptions(container="c", tags=(Tag(key="year", value="2026"),)))
    assert retagged.files == 1  # new tags change what a search may see, so the file is indexed again


async def test_corrupt_and_encrypted_pdfs_are_reported_by_name_and_the_run_goes_on(
    tmp_path: Path, index: LocalRetriever
) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n this is not really a pdf")
    make_pdf(tmp_path / "locked.pdf", ["Top secret salaries"], password="hunter2")
    make_pdf(tmp_path / "good.pdf", ["Holiday allowance is 25 days."])
    report = await index_files(collect_files([tmp_path]).files, index, IndexOptions(container="c"))
    assert report.files == 1
    assert len(report.failed) == 2
    assert any(line.startswith("broken.pdf:") for line in report.failed)
    assert any(line.startswith("locked.pdf:") and "password" in line for line in report.failed)
    assert "2 failed" in report.summary() and "1 file indexed (1 page, 1 passage)" in report.summary()
    assert [hit.file for hit in await index.search("holiday", Scope(container="c"), top=3)] == ["good.pdf"]


async def test_the_document_date_comes_from_the_option_then_the_pdf_then_the_file(
    tmp_path: Path, index: LocalRetriever
) -> None:
    dated = make_pdf(tmp_path / "dated.pdf", ["alpha"], created=datetime(2023, 3, 7, tzinfo=timezone.utc))
    (tmp_path / "plain.md").write_text("beta", encoding="utf-8")
    os.utime(tmp_path / "plain.md", (datetime(2021, 5, 4).timestamp(),) * 2)
    await index_files([dated, tmp_path / "plain.md"], index, IndexOptions(container="c"))
    [alpha] = await index.search("alpha", Scope(container="c"), top=1)
    [beta] = await index.search("beta", Scope(container="c"), top=1)
    assert (alpha.doc_date, beta.doc_date) == ("2023-03-07", "2021-05-04")
    await index_files([dated], index, IndexOptions(container="d", date="2020-01-31"))
    [given] = await index.search("alpha", Scope(container="d"), top=1)
    assert given.doc_date == "2020-01-31"


def test_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        collect_files([tmp_path / "nope.pdf"])


def test_passages_overlap_and_cover_the_whole_page() -> None:
    text = " ".join(f"Sentence number {n} ends here." for n in range(200))
    passages = split_page(text, size=500, overlap=100)
    assert all(len(passage) <= 500 for passage in passages)
    assert all(f"Sentence number {n} ends here." in " ".join(passages) for n in range(200))
    assert passages[0][-60:] in passages[1]  # the overlap carries the end of one passage into the next


async def test_a_paragraph_cut_by_a_page_break_is_found_whole_and_cited_by_its_first_page(
    tmp_path: Path, index: LocalRetriever
) -> None:
    # The question's two halves stand on two pages: no passage of one page holds both.
    first = f"{FILLER} An employee who adopts a child may take"
    second = f"sixteen weeks of paid leave. {FILLER}"
    make_pdf(tmp_path / "handbook.pdf", [first, second])
    await index_files([tmp_path / "handbook.pdf"], index, IndexOptions(container="c"))
    [hit] = await index.search("how many weeks of leave after adopting a child?", Scope(container="c"), top=1)
    assert hit.page == 1
    assert "adopts a child may take sixteen weeks of paid leave." in " ".join(hit.text.split())


def test_the_page_break_passage_holds_only_the_sentence_the_break_cuts() -> None:
    page = "Leave is granted by the manager. An employee who adopts a child may take"
    overleaf = "sixteen weeks of paid leave. Interns receive a travel allowance."
    assert bridge(page, overleaf) == "An employee who adopts a child may take sixteen weeks of paid leave."
    assert bridge("Leave is granted by the manager.", overleaf) is None  # the page ends its sentence
    assert bridge(page, "Interns receive a travel allowance.") is None  # a capital overleaf: a new sentence
    assert bridge("Benefits include:\n• Dental care", "• Vision care") is None  # a list item starts overleaf
    words = "and then some more words"
    run_on = " ".join([words] * 40)  # no sentence end overleaf: at most 150 characters of it
    assert bridge(page, run_on) == f"An employee who adopts a child may take {' '.join([words] * 6)}"


async def test_a_fact_wholly_on_the_next_page_is_cited_by_that_page_not_the_one_before(
    tmp_path: Path, index: LocalRetriever
) -> None:
    # Page 1 ends its sentence about interns; the fact opens page 2. A passage that showed it citing page 1 would send
    # the reader to a page that does not hold it.
    first = f"{FILLER} Interns are welcome on business trips with their team."
    second = f"Interns receive a travel allowance of ninety euros a day. {FILLER}"
    make_pdf(tmp_path / "handbook.pdf", [first, second])
    await index_files([tmp_path / "handbook.pdf"], index, IndexOptions(container="c"))
    hits = await index.search("what travel allowance do interns receive?", Scope(container="c"), top=5)
    showing = [hit.page for hit in hits if "ninety euros" in hit.text]
    assert showing == [2]


async def test_the_context_line_names_the_document(tmp_path: Path, index: LocalRetriever) -> None:
    pdf = FPDF()
    pdf.set_title("Expense Policy 2025")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Scope and purpose\nMeals are reimbursed up to a daily cap.")
    pdf.output(str(tmp_path / "exp.pdf"))
    await index_files([tmp_path / "exp.pdf"], index, IndexOptions(container="c"))
    [hit] = await index.search("meals", Scope(container="c"), top=1)
    assert hit.context == "Expense Policy 2025: Scope and purpose"


async def test_a_passage_is_found_by_the_name_of_its_section(tmp_path: Path, index: LocalRetriever) -> None:
    # Page 2 never says "orthodontic"; it is still the section the question names.
    first = f"Company Handbook\nOrthodontic Benefits\n{FILLER}"
    second = "Braces are paid at half the cost for children under eighteen."
    make_pdf(tmp_path / "handbook.pdf", [first, second])
    await index_files([tmp_path / "handbook.pdf"], index, IndexOptions(container="c"))
    found = await index.search("orthodontic braces", Scope(container="c"), top=5)
    assert [(hit.page, "Orthodontic Benefits" in hit.context) for hit in found][:1] == [(2, True)]


async def test_running_page_headers_and_footers_are_left_out_of_passages(tmp_path: Path, index: LocalRetriever) -> None:
    topics = [
        "Hotels are capped at 180 EUR per night in capital cities.",
        "Trains are booked in second class.",
        "Taxis need a receipt. Larkspur Ltd - Travel Policy 2026 - page 9 of 9 is not a footer here.",
    ]
    pages = [
        f"Larkspur Ltd - Travel Policy 2026\n{text}\n{FILLER}\nConfidential - page {n} of 3"
        for n, text in enumerate(topics, start=1)
    ]
    make_pdf(tmp_path / "travel.pdf", pages)
    await index_files([tmp_path / "travel.pdf"], index, IndexOptions(container="c"))
    [hotel] = await index.search("hotel capital cities", Scope(container="c"), top=1)
    assert hotel.text.startswith("Hotels are capped at 180 EUR per night in capital cities.")
    texts = [hit.text for hit in await index.search("travel policy confidential page", Scope(container="c"), top=10)]
    assert texts and not [text for text in texts if "Confidential - page" in text or text.startswith("Larkspur")]
    assert any("page 9 of 9 is not a footer here" in text for text in texts)  # the same words inside a page stay


async def test_the_sample_corpus_quotes_carry_no_page_footers(index: LocalRetriever) -> None:
    from bot.app import SAMPLE_CORPUS
    from bot.ingest.catalog import index_catalog

    await index_catalog(SAMPLE_CORPUS, index, container="sample")
    hits = await index.search("refund window monthly plans", Scope(container="sample"), top=5)
    assert hits and not [hit for hit in hits if "fictitious sample document - page" in hit.text]
