"""Scores of one question and of a whole run. Pure functions over values; nothing here does I/O.

Full runs (a real turn per question):
- `citations_matched` = |truth pages ∩ cited pages| / |truth pages|, pages compared as `file#page=N` (the public
  sample's metric); an answerable question that errored scores 0, so errors never flatter a run;
- `precision` = share of cited pages that are truth pages; `fabricated` = cited pages never shown to the model
  (0 by construction, since the citation check removes them: `removed_markers` counts what it removed);
- refusals: an unanswerable question should be refused, an answerable one should not.
Retrieval-only runs (one search with the raw question): hit@k and recall@k of the truth pages.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from bot.agent.tools import CODE, REWRITE, SEARCH
from bot.evaluation.golden import GoldenQuestion, PageKey, page_key
from bot.models import Answer, Chunk

# The agent's tool names, as the model sees them.
HIT_DEPTHS = (3, 5, 10)
SEARCH_ONLY = "ModelUnavailable: the model did not answer, so the turn fell back to quoting passages"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TurnOutcome(_Record):
    """What one turn produced, reduced to what scoring needs (or the error that stopped it)."""

    answer: str = ""
    cited: tuple[PageKey, ...] = ()
    shown: tuple[PageKey, ...] = ()  # pages of every source shown to the model in the turn
    refused: bool = False
    searches: int = 0
    rewrites: int = 0
    code_runs: int = 0
    iterations: int = 0  # model calls
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    cap_hit: bool = False
    removed_markers: int = 0  # markers naming no shown source, removed by the citation check before display
    error: str | None = None


class Judgement(_Record):
    """A judge model's grades, 1 (bad) to 5 (good)."""

    groundedness: int
    correctness: int
    reason: str = ""


class QuestionResult(_Record):
    """One golden question after a full turn: the outcome and its scores."""

    line: int
    question: str
    unanswerable: bool
    truth: tuple[PageKey, ...]
    outcome: TurnOutcome
    citations_matched: float | None  # None for unanswerable questions
    any_citation: bool
    precision: float | None  # None when nothing was cited
    fabricated: tuple[PageKey, ...]
    refused: bool
    wrong_refusal: bool
    judgement: Judgement | None = None


class Summary(_Record):
    """A full run in numbers; rates are None when no question could give them."""

    questions: int
    answerable: int
    unanswerable: int
    errors: int
    citations_matched: float | None
    any_citation: float | None
    precision: float | None
    fabricated: int
    removed_markers: int
    refusal_rate: float | None  # unanswerable questions refused
    wrong_refusals: int  # answerable questions refused
    searches: float
    rewrites: float
    code_runs: float
    iterations: float
    input_tokens: int
    output_tokens: int
    latency_mean: float
    latency_p95: float
    cap_hits: int
    groundedness: float | None = None
    correctness: float | None = None


class RetrievalResult(_Record):
    """One golden question after a single search with its raw text."""

    line: int
    question: str
    truth: tuple[PageKey, ...]
    ranked: tuple[PageKey, ...] = ()  # the page of each chunk returned, best first, repeats kept
    seconds: float = 0.0
    error: str | None = None

    def found(self, depth: int) -> set[PageKey]:
        """Truth pages among the first `depth` chunks."""
        return set(self.truth) & set(self.ranked[:depth])

    @property
    def first_hit(self) -> int | None:
        """1-based rank of the first chunk on a truth page."""
        return next((rank for rank, key in enumerate(self.ranked, start=1) if key in self.truth), None)


class RetrievalSummary(_Record):
    questions: int
    skipped: int  # unanswerable questions: no truth page to find
    errors: int
    hit_at: dict[int, float | None]  # share of questions with a truth page in the top k (None: no questions)
    recall_at: dict[int, float | None]  # mean share of truth pages in the top k
    mrr: float | None
    returned: float  # chunks a search returned, mean (the score gap may cut below the depth asked)
    latency_mean: float
    latency_p95: float


# --- turning a turn into an outcome ------------------------------------------------------------------------------
def outcome_of(answer: Answer, sources: Mapping[str, Chunk], *, seconds: float) -> TurnOutcome:
    """The outcome of a finished turn: its answer and the sources shown to the model (conversation.sources)."""
    names = [call.name for call in answer.tool_calls]
    return TurnOutcome(
        answer=answer.text,
        cited=tuple(dict.fromkeys(page_key(c.file, c.page) for c in answer.citations if c.page is not None)),
        shown=tuple(dict.fromkeys(page_key(c.file, c.page) for c in sources.values() if c.page is not None)),
        refused=not answer.answerable,
        searches=names.count(SEARCH),
        rewrites=names.count(REWRITE),
        code_runs=names.count(CODE),
        iterations=answer.model_calls,
        input_tokens=answer.usage.input_tokens,
        output_tokens=answer.usage.output_tokens,
        seconds=seconds,
        cap_hit=answer.cap_hit,
        removed_markers=len(answer.removed_markers),
        # Quoted passages without the step cap mean the model failed and the agent fell back: not the model's score.
        error=SEARCH_ONLY if answer.mode == "search_only" and not answer.cap_hit else None,
    )


def failed(error: BaseException, *, seconds: float) -> TurnOutcome:
    """The outcome of a turn that raised."""
    return TurnOutcome(error=f"{type(error).__name__}: {error}", seconds=seconds)


# --- one question ------------------------------------------------------------------------------------------------
def score_question(golden: GoldenQuestion, outcome: TurnOutcome, judgement: Judgement | None = None) -> QuestionResult:
    """Score one full turn against its golden question."""
    truth = set(golden.pages)
    cited = () if outcome.error else outcome.cited  # a failed turn scores nothing, whatever it quoted
    matched = None if golden.unanswerable else len(truth & set(cited)) / len(truth)
    refused = outcome.refused and outcome.error is None
    return QuestionResult(
        line=golden.line,
        question=golden.question,
        unanswerable=golden.unanswerable,
        truth=golden.pages,
        outcome=outcome,
        citations_matched=matched,
        any_citation=bool(cited),
        precision=sum(key in truth for key in cited) / len(cited) if cited else None,
        fabricated=tuple(key for key in cited if key not in set(outcome.shown)),
        refused=refused,
        wrong_refusal=refused and not golden.unanswerable,
        judgement=judgement,
    )


def retrieval_result(golden: GoldenQuestion, chunks: Sequence[Chunk], *, seconds: float) -> RetrievalResult:
    """The pages one search returned for a golden question."""
    ranked = tuple(page_key(c.file, c.page) for c in chunks if c.page is not None)
    return RetrievalResult(
        line=golden.line, question=golden.question, truth=golden.pages, ranked=ranked, seconds=seconds
    )


# --- a whole run -------------------------------------------------------------------------------------------------
def summarize(results: Sequence[QuestionResult]) -> Summary:
    """The numbers of a full run."""
    answerable = [r for r in results if not r.unanswerable]
    unanswerable = [r for r in results if r.unanswerable]
    ran = [r for r in results if r.outcome.error is None]
    answered = [r for r in answerable if r.outcome.error is None]
    precisions = [r.precision for r in ran if r.precision is not None]
    judged = [r.judgement for r in results if r.judgement is not None]
    seconds = [r.outcome.seconds for r in results]
    return Summary(
        questions=len(results),
        answerable=len(answerable),
        unanswerable=len(unanswerable),
        errors=len(results) - len(ran),
        citations_matched=mean([r.citations_matched or 0.0 for r in answerable]),
        any_citation=mean([float(r.any_citation) for r in answered]),
        precision=mean(precisions),
        fabricated=sum(len(r.fabricated) for r in results),
        removed_markers=sum(r.outcome.removed_markers for r in results),
        refusal_rate=mean([float(r.refused) for r in unanswerable if r.outcome.error is None]),
        wrong_refusals=sum(r.wrong_refusal for r in results),
        searches=mean([r.outcome.searches for r in ran]) or 0.0,
        rewrites=mean([r.outcome.rewrites for r in ran]) or 0.0,
        code_runs=mean([r.outcome.code_runs for r in ran]) or 0.0,
        iterations=mean([r.outcome.iterations for r in ran]) or 0.0,
        input_tokens=sum(r.outcome.input_tokens for r in results),
        output_tokens=sum(r.outcome.output_tokens for r in results),
        latency_mean=mean(seconds) or 0.0,
        latency_p95=percentile(seconds, 95),
        cap_hits=sum(r.outcome.cap_hit for r in results),
        groundedness=mean([j.groundedness for j in judged]),
        correctness=mean([j.correctness for j in judged]),
    )


def summarize_retrieval(results: Sequence[RetrievalResult], *, skipped: int = 0) -> RetrievalSummary:
    """hit@k, recall@k and MRR of a retrieval-only run; errored searches count as misses."""
    seconds = [r.seconds for r in results]
    return RetrievalSummary(
        questions=len(results),
        skipped=skipped,
        errors=sum(r.error is not None for r in results),
        hit_at={k: mean([float(bool(r.found(k))) for r in results]) for k in HIT_DEPTHS},
        recall_at={k: mean([len(r.found(k)) / len(r.truth) for r in results]) for k in HIT_DEPTHS},
        mrr=mean([1 / r.first_hit if r.first_hit else 0.0 for r in results]),
        returned=mean([len(r.ranked) for r in results]) or 0.0,
        latency_mean=mean(seconds) or 0.0,
        latency_p95=percentile(seconds, 95),
    )


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values): the smallest value with at least pct% of values at or below it."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]
