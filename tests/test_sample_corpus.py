"""The shipped sample corpus: readable PDFs, facts on the pages the README names, a catalog that matches the folder."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
import yaml
from pypdf import PdfReader

from bot.models import Tag

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bot" / "sample_corpus"
SCRIPT = ROOT / "scripts" / "make_sample_corpus.py"
TAG_KEYS = {"department", "year", "doc_type"}

# (file, 1-based page, phrase that must appear on that page and on no other page of the file)
FACTS = [
    ("refund_policy_2025.pdf", 1, "full refund within 30 days of the charge"),
    ("refund_policy_2025.pdf", 2, "Annual plans are refundable pro rata"),
    ("refund_policy_2025.pdf", 3, "email billing@larkspur-analytics.example"),
    ("refund_policy_2026.pdf", 1, "full refund within 14 days of the charge"),
    ("refund_policy_2026.pdf", 1, "It replaces the Customer Refund Policy 2025"),
    ("refund_policy_2026.pdf", 2, "refundable only within the first 30 days of the term"),
    ("refund_policy_2026.pdf", 2, "there is no pro rata refund"),
    ("refund_policy_2026.pdf", 3, "decision within 5 business days"),
    ("supplier_contract_acme.pdf", 1, "Payment terms: net 30"),
    ("supplier_contract_acme.pdf", 1, "late fee of 1.5% per month"),
    ("supplier_contract_acme.pdf", 2, "60 days' written notice"),
    ("supplier_contract_brightline.pdf", 1, "Payment terms: net 45"),
    ("supplier_contract_brightline.pdf", 1, "2% off the invoice amount if paid within 10 days"),
    ("supplier_contract_brightline.pdf", 2, "90 days' written notice"),
    ("supplier_contract_cobalt.pdf", 1, "50% upfront when a purchase order is signed and 50% on delivery"),
    ("supplier_contract_cobalt.pdf", 1, "flat late fee of USD 500"),
    ("supplier_contract_cobalt.pdf", 2, "30 days' written notice"),
    ("expenses.xlsx.pdf", 1, "Mar 2026 Sales Travel Sales kickoff 5,120.00"),
    ("expenses.xlsx.pdf", 2, "Jun 2026 Engineering Equipment Laptops (2) 3,600.00"),
]
ROW = re.compile(r"^(\w{3} 2026) (Sales|Engineering|Marketing|Finance) (.+?) ([\d,]+\.\d\d)$", re.MULTILINE)


def page_texts(path: Path) -> list[str]:
    """Each page's extracted text with runs of spaces collapsed (line breaks kept for table rows)."""
    return [re.sub(r"[ \t]+", " ", page.extract_text()) for page in PdfReader(path).pages]


def flat(text: str) -> str:
    return " ".join(text.split())


def catalog(folder: Path = CORPUS) -> dict[str, dict[str, object]]:
    return yaml.safe_load((folder / "catalog.yaml").read_text())["files"]


def shipped_pdfs() -> list[Path]:
    return sorted(CORPUS.glob("*.pdf"))


@pytest.mark.parametrize(("filename", "page", "phrase"), FACTS)
def test_fact_sits_on_the_cited_page_only(filename: str, page: int, phrase: str) -> None:
    pages = [flat(text) for text in page_texts(CORPUS / filename)]
    found_on = [number for number, text in enumerate(pages, start=1) if phrase in text]
    assert found_on == [page], f"{phrase!r} in {filename} is on pages {found_on}, expected [{page}]"


def test_the_two_refund_policies_disagree() -> None:
    old = [flat(text) for text in page_texts(CORPUS / "refund_policy_2025.pdf")]
    new = [flat(text) for text in page_texts(CORPUS / "refund_policy_2026.pdf")]
    assert "within 30 days of the charge" in old[0] and "within 30 days of the charge" not in new[0]
    assert "within 14 days of the charge" in new[0] and "within 14 days of the charge" not in old[0]
    assert "refundable pro rata" in old[1] and "no pro rata refund" in new[1]
    assert "no pro rata" not in old[1]


def test_every_page_has_extractable_text_and_files_stay_small() -> None:
    for path in shipped_pdfs():
        pages = page_texts(path)
        assert 1 <= len(pages) <= 3, path.name
        assert all(len(flat(text)) > 150 for text in pages), f"{path.name} has a page with little or no text"
        assert path.stat().st_size < 20_000, f"{path.name} is {path.stat().st_size} bytes"


def test_expense_table_reads_as_rows_so_sums_can_be_checked() -> None:
    pages = page_texts(CORPUS / "expenses.xlsx.pdf")
    rows_per_page = [ROW.findall(text) for text in pages]
    assert [len(rows) for rows in rows_per_page] == [18, 18]
    assert {month for month, *_ in rows_per_page[0]} == {"Jan 2026", "Feb 2026", "Mar 2026"}
    travel = [amount for _, _, what, amount in rows_per_page[0] if what.startswith("Travel ")]
    assert sum(float(amount.replace(",", "")) for amount in travel) == pytest.approx(16_490.00)


def test_catalog_lists_every_pdf_with_valid_tags_and_the_pdf_date() -> None:
    entries = catalog()
    assert set(entries) == {path.name for path in shipped_pdfs()}
    for filename, entry in entries.items():
        assert set(entry) == {"tags", "date"}, filename
        doc_date = date.fromisoformat(str(entry["date"]))
        tags = [Tag.parse(text) for text in entry["tags"]]
        assert {tag.key for tag in tags} <= TAG_KEYS and len({tag.key for tag in tags}) == len(tags), filename
        assert all(tag.value == str(doc_date.year) for tag in tags if tag.key == "year"), filename
        created = PdfReader(CORPUS / filename).metadata.creation_date
        assert created is not None and created.date() == doc_date, filename


@pytest.mark.slow  # starts a process
def test_regenerating_gives_the_committed_files(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], check=True, capture_output=True)
    assert sorted(path.name for path in out.glob("*.pdf")) == [path.name for path in shipped_pdfs()]
    for path in shipped_pdfs():
        assert page_texts(out / path.name) == page_texts(path), f"{path.name} differs from the script's output"
    assert catalog(out) == catalog()
