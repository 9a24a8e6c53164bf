"""Generate Folio's sample corpus: short PDFs of a fictitious company, plus the catalog the indexer reads.

Usage: .venv/bin/python scripts/make_sample_corpus.py [--out DIR]   (default: bot/sample_corpus)

Everything here is invented: Larkspur Analytics and its suppliers do not exist. The output is deterministic (fixed
creation dates, fixed producer, no timestamps), so running the script again gives byte-identical files. Needs fpdf2,
a dev dependency; the runtime only reads the PDFs.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path

import yaml
from fpdf import FPDF
from fpdf.fonts import FontFace

COMPANY = "Larkspur Analytics Ltd"
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "bot" / "sample_corpus"
# A fixed producer keeps the bytes independent of the installed fpdf2 version string.
PRODUCER = "Folio sample corpus generator"


@dataclass(frozen=True)
class Section:
    """One page of prose: a heading and its paragraphs."""

    heading: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class ProseDoc:
    """A policy or contract: one Section per page, so each fact has a known page."""

    filename: str
    title: str
    doc_date: date
    tags: tuple[str, ...]
    pages: tuple[Section, ...]


REFUND_2025 = ProseDoc(
    filename="refund_policy_2025.pdf",
    title="Customer Refund Policy 2025",
    doc_date=date(2025, 1, 15),
    tags=("department:finance", "year:2025", "doc_type:policy"),
    pages=(
        Section("1. Monthly plans and the refund window", (
            "This policy applies to all Larkspur Analytics subscriptions billed between 1 February 2025 and "
            "31 January 2026. It is owned by the Finance department and reviewed once a year.",
            "Monthly plans: a customer on a monthly plan may request a full refund within 30 days of the charge. "
            "The refund window is 30 days for every monthly plan (Starter, Team and Business).",
            "Approved refunds are paid to the original payment method within 5 business days.",
        )),
        Section("2. Annual plans", (
            "Annual plans may be cancelled at any time during the term.",
            "Annual plans are refundable pro rata: when an annual plan is cancelled, the unused full months of the "
            "term are refunded. Example: a customer who cancels after 4 months of a 12-month term receives 8/12 of "
            "the annual fee.",
            "Pro rata refunds are calculated from the first day of the next calendar month after the request.",
        )),
        Section("3. Exceptions and how to request a refund", (
            "Exceptions: Professional Services hours already delivered are not refundable. Data credits bought as "
            "add-ons are not refundable once used.",
            "How to request a refund: email billing@larkspur-analytics.example with the invoice number. "
            "Finance replies with a decision within 10 business days.",
        )),
    ),
)

REFUND_2026 = ProseDoc(
    filename="refund_policy_2026.pdf",
    title="Customer Refund Policy 2026",
    doc_date=date(2026, 1, 12),
    tags=("department:finance", "year:2026", "doc_type:policy"),
    pages=(
        Section("1. Monthly plans and the refund window", (
            "This policy applies to all Larkspur Analytics subscriptions billed from 1 February 2026. It replaces "
            "the Customer Refund Policy 2025.",
            "Monthly plans: a customer on a monthly plan may request a full refund within 14 days of the charge. "
            "The refund window is 14 days for every monthly plan (Starter, Team and Business).",
            "Approved refunds are paid to the original payment method within 10 business days.",
        )),
        Section("2. Annual plans", (
            "Annual plans are refundable only within the first 30 days of the term: a customer who cancels within "
            "the first 30 days receives a full refund of the annual fee.",
            "After the first 30 days there is no pro rata refund. Cancelling an annual plan after the first 30 "
            "days stops the renewal; the plan stays active until the end of the paid term.",
        )),
        Section("3. Exceptions and how to request a refund", (
            "Exceptions: Professional Services hours already delivered are not refundable. Data credits bought as "
            "add-ons are not refundable once used. If monthly uptime falls below 99.5%, the customer receives a "
            "service credit of 10% of that month's fee instead of a refund.",
            "How to request a refund: use the form under Billing > Request a refund in the Larkspur web app; "
            "requests by email are no longer accepted. Finance replies with a decision within 5 business days.",
        )),
    ),
)

CONTRACT_TAGS = ("department:procurement", "doc_type:contract")

ACME = ProseDoc(
    filename="supplier_contract_acme.pdf",
    title="Supply Agreement: Acme Office Supplies",
    doc_date=date(2024, 3, 1),
    tags=CONTRACT_TAGS,
    pages=(
        Section("1. Parties, scope and payment terms", (
            f"Agreement LA-PRC-2024-017 between {COMPANY} (the Customer) and Acme Office Supplies Ltd "
            "(the Supplier), signed on 1 March 2024.",
            "Scope: the Supplier delivers office supplies and office furniture to the Customer's offices.",
            "Payment terms: net 30. The Customer pays each invoice within 30 days of the invoice date.",
            "Late fees: overdue amounts bear a late fee of 1.5% per month.",
        )),
        Section("2. Term and termination", (
            "Term: 24 months from 1 March 2024. The agreement renews automatically for further 12-month periods.",
            "Termination: either party may terminate with 60 days' written notice. For a material breach the other "
            "party has 30 days to cure before termination takes effect.",
        )),
    ),
)

BRIGHTLINE = ProseDoc(
    filename="supplier_contract_brightline.pdf",
    title="Services Agreement: Brightline Logistics",
    doc_date=date(2024, 7, 1),
    tags=CONTRACT_TAGS,
    pages=(
        Section("1. Parties, scope and payment terms", (
            f"Agreement LA-PRC-2024-031 between {COMPANY} (the Customer) and Brightline Logistics Ltd "
            "(the Supplier), signed on 1 July 2024.",
            "Scope: the Supplier provides courier and freight services for hardware shipments to customers.",
            "Payment terms: net 45. The Customer pays each invoice within 45 days of the invoice date. "
            "Early-payment discount: 2% off the invoice amount if paid within 10 days of the invoice date.",
            "Late fees: amounts unpaid after 45 days bear a late fee of 1% per month.",
        )),
        Section("2. Term and termination", (
            "Term: 36 months from 1 July 2024. The agreement does not renew automatically.",
            "Termination: the Customer may terminate for convenience with 90 days' written notice and pays an "
            "early termination fee equal to one month's average invoice.",
        )),
    ),
)

COBALT = ProseDoc(
    filename="supplier_contract_cobalt.pdf",
    title="Purchase Agreement: Cobalt Hardware Systems",
    doc_date=date(2025, 1, 15),
    tags=CONTRACT_TAGS,
    pages=(
        Section("1. Parties, scope and payment terms", (
            f"Agreement LA-PRC-2025-004 between {COMPANY} (the Customer) and Cobalt Hardware Systems Ltd "
            "(the Supplier), signed on 15 January 2025.",
            "Scope: the Supplier builds and delivers server hardware under purchase orders.",
            "Payment terms: 50% upfront when a purchase order is signed and 50% on delivery, payable within "
            "15 days of delivery acceptance.",
            "Late fees: a flat late fee of USD 500 for each invoice more than 15 days overdue.",
        )),
        Section("2. Term and termination", (
            "Term: 12 months from 15 January 2025, renewable only by mutual written agreement.",
            "Termination: either party may terminate with 30 days' written notice. Upfront payments are refunded "
            "only if the Supplier fails to deliver within 60 days of the purchase order.",
        )),
    ),
)

PROSE_DOCS = (REFUND_2025, REFUND_2026, ACME, BRIGHTLINE, COBALT)

EXPENSES_FILENAME = "expenses.xlsx.pdf"
EXPENSES_TITLE = "Expenses H1 2026"
EXPENSES_DATE = date(2026, 7, 6)
EXPENSES_TAGS = ("department:finance", "year:2026", "doc_type:spreadsheet")
EXPENSE_HEADER = ("Month", "Department", "Category", "Description", "Amount (USD)")
# (month, department, category, description, amount in cents); Q1 prints on page 1, Q2 on page 2.
Q1_ROWS = (
    ("Jan 2026", "Sales", "Travel", "Customer visits", 342000),
    ("Jan 2026", "Engineering", "Software", "CI and monitoring", 215000),
    ("Jan 2026", "Marketing", "Events", "Trade show booth", 480000),
    ("Jan 2026", "Finance", "Software", "Accounting package", 64000),
    ("Jan 2026", "Engineering", "Travel", "Team offsite", 198000),
    ("Jan 2026", "Sales", "Meals", "Client dinners", 41000),
    ("Feb 2026", "Sales", "Travel", "Customer visits", 276000),
    ("Feb 2026", "Engineering", "Equipment", "Laptops (3)", 540000),
    ("Feb 2026", "Marketing", "Advertising", "Search ads", 310000),
    ("Feb 2026", "Finance", "Travel", "Audit planning trip", 87000),
    ("Feb 2026", "Engineering", "Software", "CI and monitoring", 215000),
    ("Feb 2026", "Marketing", "Meals", "Event catering", 69000),
    ("Mar 2026", "Sales", "Travel", "Sales kickoff", 512000),
    ("Mar 2026", "Engineering", "Software", "CI and monitoring", 215000),
    ("Mar 2026", "Marketing", "Travel", "Trade show travel", 234000),
    ("Mar 2026", "Finance", "Professional fees", "Year-end audit", 650000),
    ("Mar 2026", "Engineering", "Equipment", "Monitors (6)", 156000),
    ("Mar 2026", "Sales", "Meals", "Client dinners", 52000),
)
Q2_ROWS = (
    ("Apr 2026", "Sales", "Travel", "Customer visits", 305000),
    ("Apr 2026", "Engineering", "Software", "CI and monitoring", 230000),
    ("Apr 2026", "Marketing", "Advertising", "Search ads", 290000),
    ("Apr 2026", "Finance", "Software", "Accounting package", 64000),
    ("Apr 2026", "Engineering", "Travel", "Conference travel", 221000),
    ("Apr 2026", "Sales", "Meals", "Client dinners", 38000),
    ("May 2026", "Sales", "Travel", "Customer visits", 248000),
    ("May 2026", "Engineering", "Software", "CI and monitoring", 230000),
    ("May 2026", "Marketing", "Events", "Webinar platform", 120000),
    ("May 2026", "Finance", "Travel", "Bank meetings", 46000),
    ("May 2026", "Engineering", "Equipment", "Test devices", 273000),
    ("May 2026", "Marketing", "Meals", "Event catering", 54000),
    ("Jun 2026", "Sales", "Travel", "Customer visits", 361000),
    ("Jun 2026", "Engineering", "Software", "CI and monitoring", 230000),
    ("Jun 2026", "Marketing", "Travel", "Roadshow travel", 189000),
    ("Jun 2026", "Finance", "Professional fees", "Tax advisory", 240000),
    ("Jun 2026", "Engineering", "Equipment", "Laptops (2)", 360000),
    ("Jun 2026", "Sales", "Meals", "Client dinners", 45000),
)


class _SamplePdf(FPDF):
    """A page layout with a running footer naming the document, its fictitious status and the page."""

    def __init__(self, *, title: str, doc_date: date, orientation: str = "portrait") -> None:
        super().__init__(orientation=orientation, format="A4")
        self.doc_title = title
        self.set_title(title)
        self.set_author(COMPANY)
        self.set_producer(PRODUCER)
        self.set_creator(PRODUCER)
        # The indexer takes the document date from this metadata field.
        self.set_creation_date(datetime(doc_date.year, doc_date.month, doc_date.day, 9, 0, tzinfo=timezone.utc))
        self.set_margins(20, 20, 20)
        self.set_auto_page_break(auto=True, margin=20)
        self.alias_nb_pages()

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("Helvetica", size=8)
        text = f"{COMPANY} - {self.doc_title} - fictitious sample document - page {self.page_no()} of {{nb}}"
        self.cell(0, 8, text, align="C")


def _title_block(pdf: _SamplePdf, title: str, subtitle: str) -> None:
    pdf.set_font("Helvetica", style="B", size=16)
    pdf.multi_cell(0, 9, title, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=10)
    pdf.multi_cell(0, 6, subtitle, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)


def build_prose(doc: ProseDoc) -> bytes:
    """Render a policy or contract: a title on page 1, then one Section per page."""
    pdf = _SamplePdf(title=doc.title, doc_date=doc.doc_date)
    for number, section in enumerate(doc.pages, start=1):
        pdf.add_page()
        if number == 1:
            _title_block(pdf, doc.title, f"{COMPANY} - dated {doc.doc_date.isoformat()}")
        pdf.set_font("Helvetica", style="B", size=13)
        pdf.multi_cell(0, 8, section.heading, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
        pdf.set_font("Helvetica", size=11)
        for paragraph in section.paragraphs:
            pdf.multi_cell(0, 6, paragraph, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    return bytes(pdf.output())


def money(cents: int) -> str:
    """Format cents as a spreadsheet shows dollars: 1234500 -> '12,345.00'."""
    return f"{cents // 100:,}.{cents % 100:02d}"


def _expense_table(pdf: _SamplePdf, rows: Sequence[tuple[str, str, str, str, int]]) -> None:
    pdf.set_font("Helvetica", size=10)
    headings = FontFace(emphasis="BOLD", fill_color=(220, 220, 220))
    with pdf.table(col_widths=(22, 28, 28, 40, 26), text_align=("LEFT",) * 4 + ("RIGHT",),
                   headings_style=headings, line_height=6) as table:
        table.row(EXPENSE_HEADER)
        for month, department, category, description, cents in rows:
            table.row((month, department, category, description, money(cents)))


def build_expenses() -> bytes:
    """Render the expense sheet as a spreadsheet export: Q1 rows on page 1, Q2 rows on page 2."""
    pdf = _SamplePdf(title=EXPENSES_TITLE, doc_date=EXPENSES_DATE)
    for quarter, rows in (("Q1 (January-March 2026)", Q1_ROWS), ("Q2 (April-June 2026)", Q2_ROWS)):
        pdf.add_page()
        _title_block(pdf, f"Sheet: {EXPENSES_TITLE}", f"Exported from expenses.xlsx - {quarter}")
        _expense_table(pdf, rows)
    return bytes(pdf.output())


def catalog_text() -> str:
    """The catalog.yaml the indexer reads: per file its tags and document date."""
    files = {doc.filename: {"tags": list(doc.tags), "date": doc.doc_date.isoformat()} for doc in PROSE_DOCS}
    files[EXPENSES_FILENAME] = {"tags": list(EXPENSES_TAGS), "date": EXPENSES_DATE.isoformat()}
    header = "# Generated by scripts/make_sample_corpus.py; edit the script, not this file.\n"
    return header + yaml.safe_dump({"files": files}, sort_keys=False, default_flow_style=None, width=120)


def write_corpus(out: Path) -> list[Path]:
    """Write every sample PDF and catalog.yaml into `out`; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    outputs = {doc.filename: build_prose(doc) for doc in PROSE_DOCS}
    outputs[EXPENSES_FILENAME] = build_expenses()
    outputs["catalog.yaml"] = catalog_text().encode()
    written = []
    for name, data in outputs.items():
        path = out / name
        path.write_bytes(data)
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write the corpus into --out (default bot/sample_corpus)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    for path in write_corpus(args.out):
        print(f"{path}  {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
