"""Golden files: one JSON object a line, `{"question": ..., "truth": "... [file.pdf#page=N]"}` or
`{"question": ..., "unanswerable": true}`. Pages are compared as `file#page=N` keys. A line marked `"review": true`
(written by `folio feedback export` for a 👎) is skipped until an admin writes its truth and removes the mark.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bot.errors import InvalidInput
from bot.models import display_name

# `[Northwind_Standard_Benefits_Details.pdf#page=7]`: the citation form of the public sample's ground truth.
TRUTH_CITATION = re.compile(r"\[([^\[\]#]+?)#page=(\d+)\]")

PageKey = str  # `file.pdf#page=7`


def page_key(file: str, page: int) -> PageKey:
    """The key two citations are compared by: `file#page=N`, the file as people see it (a truth may name a converted
    deck `deck.pptx` or, as older golden files do, `deck.pptx.pdf`)."""
    return f"{display_name(file)}#page={page}"


@dataclass(frozen=True)
class GoldenQuestion:
    """One line of a golden file."""

    line: int  # 1-based line number in its file, for messages and for matching runs
    question: str
    truth: str = ""
    pages: tuple[PageKey, ...] = ()  # the truth citations, first-seen order, unique
    unanswerable: bool = False


def truth_pages(truth: str) -> tuple[PageKey, ...]:
    """Every `[file#page=N]` citation in a truth text, unique, in order."""
    keys = (page_key(file.strip(), int(page)) for file, page in TRUTH_CITATION.findall(truth))
    return tuple(dict.fromkeys(keys))


def parse_golden(lines: Iterable[str], *, source: str = "golden file") -> list[GoldenQuestion]:
    """Golden questions from JSONL text; blank lines are skipped; a bad line raises InvalidInput naming it."""
    parsed = [
        _parse_line(text, number=number, source=source) for number, text in enumerate(lines, start=1) if text.strip()
    ]
    questions = [question for question in parsed if question is not None]
    if not questions:
        raise InvalidInput(
            f'{source} holds no questions: write one JSON object per line with a "question" (lines marked '
            '"review": true are skipped until their truth is written).'
        )
    return questions


def load_golden(path: Path) -> list[GoldenQuestion]:
    """Read and parse a golden file; a missing file or a bad line raises InvalidInput."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"Cannot read the golden file {path} ({exc.strerror}). Check the path.") from exc
    # JSON lines end at "\n" (and "\r\n") only: splitlines() would also split at U+2028 and the like, which JSON
    # allows raw inside a string
    return parse_golden(text.split("\n"), source=str(path))


def _parse_line(text: str, *, number: int, source: str) -> GoldenQuestion | None:
    where = f"{source}, line {number}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{where} is not valid JSON ({exc.msg} at column {exc.colno}).") from exc
    if not isinstance(data, dict):
        raise InvalidInput(f'{where} must be a JSON object with a "question".')
    if data.get("review") is True:  # feedback still to review: no truth to score against yet
        return None
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InvalidInput(f'{where} has no "question" (a non-empty string).')
    unanswerable = data.get("unanswerable", False)
    if not isinstance(unanswerable, bool):
        raise InvalidInput(f'{where}: "unanswerable" must be true or false.')
    truth = data.get("truth", "")
    if not isinstance(truth, str):
        raise InvalidInput(f'{where}: "truth" must be a string.')
    pages = truth_pages(truth)
    if not unanswerable and not pages:
        raise InvalidInput(
            f'{where} has no truth citation: end "truth" with [file.pdf#page=N], or mark it "unanswerable": true.'
        )
    if unanswerable and pages:
        raise InvalidInput(f"{where} is marked unanswerable but its truth cites {pages[0]}: keep one of the two.")
    return GoldenQuestion(line=number, question=question.strip(), truth=truth, pages=pages, unanswerable=unanswerable)
