"""The truth pages evals/truth_fixes.jsonl corrects in the shared ground truth: each fix holds only if the page the
truth cites lacks the answer's words and the page it names instead has every one of them, read as `folio index`
reads the PDF (benchmarks/retrieval_quality.py --fixes scores the ground truth with them)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from bot.ingest.pdf_text import read_pdf

ROOT = Path(__file__).resolve().parent.parent.parent
FIXES = [json.loads(line) for line in (ROOT / "evals" / "truth_fixes.jsonl").read_text().splitlines() if line.strip()]


@functools.cache
def pages_of(pdf: Path) -> tuple[str, ...]:
    return read_pdf(pdf, None).pages  # a fix's two pages are usually of one PDF: read once


def page_text(corpus: Path, citation: str) -> str:
    file, page = citation.split("#page=")
    return pages_of(corpus / file)[int(page) - 1].lower()


@pytest.mark.parametrize("fix", FIXES, ids=[fix["question"][:40] for fix in FIXES])
def test_a_fixed_truth_page_holds_the_answer_and_the_cited_one_does_not(fix: dict, shared_dir: Path) -> None:
    corpus = shared_dir / "corpus"
    truth = next(
        json.loads(line)["truth"]
        for line in (corpus / "ground_truth.jsonl").read_text().splitlines()
        if line.strip() and json.loads(line)["question"] == fix["question"]
    )
    assert f"[{fix['cites']}]" in truth  # the ground truth still cites it (else the fix is stale)
    cited, holding = page_text(corpus, fix["cites"]), page_text(corpus, fix["holds"])
    assert [word for word in fix["words"] if word.lower() in cited] == []
    assert [word for word in fix["words"] if word.lower() not in holding] == []
