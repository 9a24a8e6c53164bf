"""Scores on hand-made outcomes whose right answers are known."""

from __future__ import annotations

from bot.evaluation.golden import GoldenQuestion
from bot.evaluation.report import RunRecord, changed_questions, compare, markdown
from bot.evaluation.scoring import (
    RetrievalResult,
    TurnOutcome,
    failed,
    outcome_of,
    percentile,
    score_question,
    summarize,
    summarize_retrieval,
)
from bot.models import Answer, Chunk, Citation, ToolCall, Usage

TWO_PAGES = GoldenQuestion(line=1, question="compare", pages=("a.pdf#page=1", "b.pdf#page=2"))
NO_ANSWER = GoldenQuestion(line=2, question="vacation?", unanswerable=True)


def outcome(cited: tuple[str, ...] = (), shown: tuple[str, ...] | None = None, **fields: object) -> TurnOutcome:
    return TurnOutcome(cited=cited, shown=cited if shown is None else shown, **fields)  # type: ignore[arg-type]


def test_half_the_truth_cited_with_one_extra_page_scores_half_matched_and_half_precise() -> None:
    result = score_question(TWO_PAGES, outcome(("a.pdf#page=1", "c.pdf#page=9")))
    assert result.citations_matched == 0.5
    assert result.precision == 0.5
    assert result.any_citation and result.fabricated == ()


def test_a_cited_page_never_shown_to_the_model_is_fabricated() -> None:
    result = score_question(TWO_PAGES, outcome(("a.pdf#page=1", "b.pdf#page=2"), shown=("a.pdf#page=1",)))
    assert result.citations_matched == 1.0
    assert result.fabricated == ("b.pdf#page=2",)


def test_refusals_are_right_on_unanswerable_and_wrong_on_answerable() -> None:
    right = score_question(NO_ANSWER, outcome(refused=True))
    wrong = score_question(TWO_PAGES, outcome(refused=True))
    assert right.refused and not right.wrong_refusal and right.citations_matched is None
    assert wrong.wrong_refusal and wrong.citations_matched == 0.0 and wrong.precision is None


def test_the_summary_counts_errors_as_misses_and_refusals_per_kind() -> None:
    results = [
        score_question(TWO_PAGES, outcome(("a.pdf#page=1", "b.pdf#page=2"), seconds=1.0, searches=2)),
        score_question(TWO_PAGES, failed(RuntimeError("boom"), seconds=3.0)),
        score_question(NO_ANSWER, outcome(refused=True, seconds=2.0, searches=1)),
        score_question(NO_ANSWER, outcome(("a.pdf#page=1",), seconds=4.0)),
    ]
    summary = summarize(results)
    assert (summary.questions, summary.answerable, summary.unanswerable, summary.errors) == (4, 2, 2, 1)
    assert summary.citations_matched == 0.5  # the errored answerable question scores 0
    assert summary.any_citation == 1.0  # of the answerable questions that ran
    assert summary.refusal_rate == 0.5
    assert summary.searches == 1.0  # mean over the three that ran
    assert summary.latency_mean == 2.5 and summary.latency_p95 == 4.0


def test_an_answer_becomes_an_outcome_with_pages_tools_and_tokens() -> None:
    shown = {
        "S1": Chunk(id="1", file="a.pdf", page=1, container="c", text="x"),
        "S2": Chunk(id="2", file="b.pdf", page=2, container="c", text="y"),
    }
    answer = Answer(
        text="x [1]",
        citations=(Citation(label=1, file="a.pdf", title="a", page=1, container="c"),),
        tool_calls=tuple(ToolCall(name=name) for name in ("rewrite_query", "search_documents", "search_documents")),
        response_ids=("r1", "r2", "r3"),
        model_calls=3,
        usage=Usage(input_tokens=100, output_tokens=20),
        removed_markers=("S7", "S9"),
    )
    got = outcome_of(answer, shown, seconds=1.5)
    assert got.cited == ("a.pdf#page=1",) and got.shown == ("a.pdf#page=1", "b.pdf#page=2")
    assert (got.searches, got.rewrites, got.code_runs, got.iterations) == (2, 1, 0, 3)
    assert (got.input_tokens, got.output_tokens, got.refused) == (100, 20, False)
    assert got.removed_markers == 2


def test_retrieval_hits_count_the_truth_pages_in_the_top_k() -> None:
    results = [
        RetrievalResult(line=1, question="a", truth=("t#page=1", "t#page=2"), ranked=("x#page=1",) * 3 + ("t#page=1",)),
        RetrievalResult(line=2, question="b", truth=("t#page=3",), ranked=("t#page=3",)),
        RetrievalResult(line=3, question="c", truth=("t#page=4",), error="SearchUnavailable: down"),
    ]
    summary = summarize_retrieval(results, skipped=2)
    assert summary.hit_at == {3: 1 / 3, 5: 2 / 3, 10: 2 / 3}
    assert summary.recall_at[5] == (0.5 + 1.0 + 0.0) / 3
    assert summary.mrr == (1 / 4 + 1.0 + 0.0) / 3
    assert (summary.errors, summary.skipped) == (1, 2)


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 95) == 0.0
    assert percentile([float(n) for n in range(1, 101)], 95) == 95.0
    assert percentile([1.0, 9.0], 50) == 1.0


def test_reports_show_the_metrics_and_what_moved_between_runs() -> None:
    before = [score_question(TWO_PAGES, outcome(("a.pdf#page=1",)))]
    after = [score_question(TWO_PAGES, outcome(("a.pdf#page=1", "b.pdf#page=2")))]
    old = RunRecord(kind="full", golden="g.jsonl", container="c", started_at="t1", full=summarize(before))
    new = RunRecord(kind="full", golden="g.jsonl", container="c", started_at="t2", full=summarize(after))
    assert "| citations_matched (reference 0.42) | 1.00 |" in markdown(new)
    assert "| citations_matched (reference 0.42) | 0.50 | 1.00 |" in compare(old, new)
    assert changed_questions(before, after) == ["- line 1: matched 0.50 -> matched 1.00: compare"]
