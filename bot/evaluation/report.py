"""Reports of an evaluation run: the record saved with `--out`, Markdown tables, and the comparison of two runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bot.evaluation.scoring import HIT_DEPTHS, QuestionResult, RetrievalResult, RetrievalSummary, Summary

# The public sample (azure-search-openai-demo) publishes citations_matched 0.42 on this corpus: the bar to beat.
REFERENCE_CITATIONS_MATCHED = 0.42


class RunRecord(BaseModel):
    """What a run was and how it scored: `summary.json` in an `--out` folder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["full", "retrieval"]
    golden: str
    container: str
    model: str | None = None
    started_at: str
    full: Summary | None = None
    retrieval: RetrievalSummary | None = None


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _num(value: float) -> str:
    return f"{value:.2f}"


def _table(rows: Sequence[tuple[str, ...]], header: tuple[str, ...]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def full_rows(summary: Summary) -> list[tuple[str, str]]:
    """(metric, value) rows of a full run, in reading order."""
    rows = [
        (
            "questions (answerable / unanswerable)",
            f"{summary.questions} ({summary.answerable} / {summary.unanswerable})",
        ),
        ("errors", str(summary.errors)),
        (f"citations_matched (reference {REFERENCE_CITATIONS_MATCHED})", _pct(summary.citations_matched)),
        ("any_citation", _pct(summary.any_citation)),
        ("citation precision", _pct(summary.precision)),
        ("fabricated citations", str(summary.fabricated)),
        ("invented markers removed before display", str(summary.removed_markers)),
        ("refusal rate on unanswerable", _pct(summary.refusal_rate)),
        ("wrong refusals on answerable", str(summary.wrong_refusals)),
        (
            "searches / rewrites / code runs per question",
            f"{_num(summary.searches)} / {_num(summary.rewrites)} / {_num(summary.code_runs)}",
        ),
        ("model calls per question", _num(summary.iterations)),
        ("step cap hit", str(summary.cap_hits)),
        ("tokens in / out", f"{summary.input_tokens} / {summary.output_tokens}"),
        ("latency mean / p95 (s)", f"{_num(summary.latency_mean)} / {_num(summary.latency_p95)}"),
    ]
    if summary.groundedness is not None:
        rows.append(
            ("judge groundedness / correctness (1-5)", f"{_pct(summary.groundedness)} / {_pct(summary.correctness)}")
        )
    return rows


def retrieval_rows(summary: RetrievalSummary) -> list[tuple[str, str]]:
    """(metric, value) rows of a retrieval-only run."""
    rows = [
        ("questions (skipped unanswerable)", f"{summary.questions} ({summary.skipped})"),
        ("errors", str(summary.errors)),
    ]
    rows += [(f"hit@{k}", _pct(summary.hit_at.get(k))) for k in HIT_DEPTHS]
    rows += [(f"recall@{k}", _pct(summary.recall_at.get(k))) for k in HIT_DEPTHS]
    rows += [
        ("MRR", _pct(summary.mrr)),
        ("chunks returned per search (mean)", _num(summary.returned)),
        ("search latency mean / p95 (s)", f"{_num(summary.latency_mean)} / {_num(summary.latency_p95)}"),
    ]
    return rows


def rows_of(record: RunRecord) -> list[tuple[str, str]]:
    if record.full is not None:
        return full_rows(record.full)
    assert record.retrieval is not None
    return retrieval_rows(record.retrieval)


def markdown(record: RunRecord) -> str:
    """The run as a heading line and a Markdown table."""
    what = "full eval" if record.kind == "full" else "retrieval-only eval"
    model = f", model {record.model}" if record.model else ""
    heading = f"**{what}** of `{record.golden}` on container `{record.container}`{model}"
    return heading + "\n\n" + _table(rows_of(record), ("metric", "value"))


def compare(old: RunRecord, new: RunRecord) -> str:
    """A Markdown table of two runs side by side (same metrics only)."""
    before = dict(rows_of(old))
    rows = [(metric, before.get(metric, "-"), value) for metric, value in rows_of(new)]
    return _table(rows, ("metric", f"before ({old.started_at})", f"now ({new.started_at})"))


def changed_questions(
    old: Sequence[QuestionResult | RetrievalResult], new: Sequence[QuestionResult | RetrievalResult]
) -> list[str]:
    """One line per question (matched by its text) whose score moved between two runs."""
    earlier = {result.question: result for result in old}
    lines = []
    for result in new:
        before = earlier.get(result.question)
        if before is None:
            continue
        was, now = _headline(before), _headline(result)
        if was != now:
            lines.append(f"- line {result.line}: {was} -> {now}: {result.question[:90]}")
    return lines


def _headline(result: QuestionResult | RetrievalResult) -> str:
    if isinstance(result, RetrievalResult):
        return f"first hit {result.first_hit or '-'}"
    if result.outcome.error:
        return "error"
    if result.unanswerable:
        return "refused" if result.refused else "answered"
    return f"matched {_pct(result.citations_matched)}"
