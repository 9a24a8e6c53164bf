"""Golden files: the shipped ones parse, and a bad line is named with what to fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.errors import InvalidInput
from bot.evaluation.feedback_export import golden_lines
from bot.evaluation.golden import load_golden, parse_golden
from bot.store.feedback import FeedbackRecord

EVALS = Path(__file__).resolve().parents[2] / "evals"


def test_the_shared_ground_truth_parses_with_one_or_two_pages_a_question(shared_dir: Path) -> None:
    questions = load_golden(shared_dir / "corpus" / "ground_truth.jsonl")
    assert len(questions) == 50
    assert questions[0].pages == ("Northwind_Standard_Benefits_Details.pdf#page=7",)
    assert {len(q.pages) for q in questions} == {1, 2}


def test_the_shipped_golden_files_hold_at_least_ten_questions_each() -> None:
    unanswerable = load_golden(EVALS / "unanswerable.jsonl")
    multipart = load_golden(EVALS / "multipart.jsonl")
    assert len(unanswerable) >= 10 and all(q.unanswerable and not q.pages for q in unanswerable)
    assert len(multipart) >= 10 and all(len(q.pages) >= 2 and not q.unanswerable for q in multipart)


def test_truth_pages_are_unique_and_in_order() -> None:
    [question] = parse_golden(['{"question": "q", "truth": "a [x.pdf#page=2] b [y.pdf#page=1][x.pdf#page=2]"}'])
    assert question.pages == ("x.pdf#page=2", "y.pdf#page=1")


def test_blank_lines_are_skipped_and_line_numbers_kept() -> None:
    questions = parse_golden(["", '{"question": "q", "unanswerable": true}', "  "])
    assert [q.line for q in questions] == [2]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"question": "q", "truth": "no citation"}', "has no truth citation"),
        ('{"truth": "t [a.pdf#page=1]"}', 'has no "question"'),
        ('{"question": "  ", "unanswerable": true}', 'has no "question"'),
        ('{"question": "q", "unanswerable": "yes"}', '"unanswerable" must be true or false'),
        ('{"question": "q", "unanswerable": true, "truth": "[a.pdf#page=3]"}', "marked unanswerable but its truth"),
        ('["question"]', "must be a JSON object"),
        ('{"question": "q", truth: 1}', "is not valid JSON"),
    ],
)
def test_a_bad_line_is_named_with_what_is_wrong(line: str, says: str) -> None:
    good = '{"question": "fine", "truth": "t [a.pdf#page=1]"}'
    with pytest.raises(InvalidInput) as caught:
        parse_golden([good, line], source="my.jsonl")
    assert "my.jsonl, line 2" in str(caught.value)
    assert says in str(caught.value)


def test_a_missing_or_empty_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="Cannot read the golden file"):
        load_golden(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(InvalidInput, match="holds no questions"):
        load_golden(tmp_path / "empty.jsonl")


SEPARATORS = "\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"  # what str.splitlines() also ends a line at


def test_a_feedback_comment_with_unicode_line_separators_keeps_the_exported_file_readable(tmp_path: Path) -> None:
    """A 👎 comment holding U+2028 (pasted from a web page) made the whole exported golden file unreadable."""
    common = {"at": "2026-12-01T10:00:00+00:00", "team": "T1", "channel": "C1", "thread_ts": "1.0", "turn": 0}
    liked = FeedbackRecord(
        **common,
        user="U1",
        rating="helpful",
        question=f"Notice{SEPARATORS}period?",
        answer="One month [1].",
        citations=({"file": "h.pdf", "page": 3},),
    )
    disliked = FeedbackRecord(
        **common,
        user="U2",
        rating="not_helpful",
        question="Notice period?",
        answer="One month [1].",
        reason="other",
        comment=f"old{SEPARATORS}policy",
    )
    exported = tmp_path / "feedback.jsonl"
    exported.write_text(
        "".join(line + "\n" for line in golden_lines([liked, disliked])), encoding="utf-8"
    )  # as `folio feedback export`

    [question] = load_golden(exported)

    assert question.question == f"Notice{SEPARATORS}period?" and question.pages == ("h.pdf#page=3",)
    assert len(exported.read_text(encoding="utf-8").splitlines()) == 2  # one line per record, for any reader
    review = json.loads(exported.read_text(encoding="utf-8").splitlines()[1])
    assert review["feedback"]["comment"] == f"old{SEPARATORS}policy"
