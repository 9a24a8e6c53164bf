"""`folio eval GOLDEN.jsonl [--container NAME] [--retrieval-only] [--json] [--out DIR] [--baseline DIR]`"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

from bot import messages
from bot.app import Folio, open_folio
from bot.cli.common import HelpFormatter, add_scope_arguments, checked_scope, settings_from
from bot.cli.progress import ProgressBar
from bot.config import Settings
from bot.errors import InvalidInput
from bot.evaluation.golden import GoldenQuestion, load_golden
from bot.evaluation.report import RunRecord, changed_questions, compare, markdown
from bot.evaluation.runs import Result, load_run, save_run
from bot.evaluation.scoring import (
    HIT_DEPTHS,
    QuestionResult,
    RetrievalResult,
    failed,
    outcome_of,
    retrieval_result,
    score_question,
    summarize,
    summarize_retrieval,
)
from bot.models import Profile, Scope
from bot.retrieval import Retriever, SearchIndex

T = TypeVar("T")

DESCRIPTION = """\
Score Folio on a golden file: one JSON object a line, {"question": ..., "truth": "... [file.pdf#page=N]"}
or {"question": ..., "unanswerable": true}.

--retrieval-only runs one search per question with its raw text and reports hit@3/5/10 (no model needed).
Otherwise each question is a real turn with the configured model, scored on citations_matched (truth pages
cited / truth pages; the public sample's published runs score 0.42 on the shared corpus), citation precision,
fabricated citations, refusals, tool use, tokens and latency. A question that fails is recorded as an error."""

EPILOG = """\
the shared corpus (../shared/corpus) lives in container "benefits" once indexed:
  folio index ../shared/corpus --container benefits
  folio eval ../shared/corpus/ground_truth.jsonl --container benefits --retrieval-only
  folio eval evals/multipart.jsonl --container benefits --out runs/multipart      # needs a model (OPENAI_API_KEY)
  folio eval evals/multipart.jsonl --container benefits --baseline runs/multipart # compare with that run"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="score answers (or retrieval) on a golden file",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("golden", type=Path, metavar="GOLDEN.jsonl", help="the golden questions")
    add_scope_arguments(parser)
    parser.add_argument("--retrieval-only", action="store_true", help="one search per question, no model: hit@k")
    parser.add_argument("--profile", choices=("fast", "thorough"), default="fast", help="agent profile (full run)")
    parser.add_argument("--concurrency", type=int, default=4, metavar="N", help="questions run at once (default 4)")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N questions")
    parser.add_argument("--judge", metavar="MODEL", help="also grade groundedness and correctness 1-5 with MODEL")
    parser.add_argument("--out", type=Path, metavar="DIR", help="save summary.json and results.jsonl (per question)")
    parser.add_argument("--baseline", type=Path, metavar="DIR", help="compare with a run saved earlier by --out")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the eval, print its table (or JSON), save it with --out, compare it with --baseline."""
    settings = settings_from(args)
    questions = load_golden(args.golden)[: args.limit] if args.limit else load_golden(args.golden)
    if args.concurrency < 1:
        raise InvalidInput("--concurrency must be at least 1.")
    baseline = load_run(args.baseline) if args.baseline else None
    record, results = asyncio.run(_evaluate(args, settings, questions))
    print(record.model_dump_json(indent=2) if args.json else markdown(record))
    if args.out:
        save_run(args.out, record, results)
        print(f"saved to {args.out}", file=sys.stderr)
    if baseline is not None:
        _print_comparison(baseline[0], baseline[1], record, results)
    return 0


async def _evaluate(
    args: argparse.Namespace, settings: Settings, questions: list[GoldenQuestion]
) -> tuple[RunRecord, Sequence[Result]]:
    async with open_folio(settings) as folio:
        scope = await checked_scope(args, folio)
        retriever = folio.retriever
        if not args.retrieval_only and folio.model is None:
            raise InvalidInput(
                "A full eval needs a model: set OPENAI_API_KEY (or AZURE_OPENAI_ENDPOINT), or pass --retrieval-only."
            )
        await _check_documents(retriever, scope, questions, named=args.container is not None or bool(args.channel))
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        common = functools.partial(RunRecord, golden=str(args.golden), container=scope.describe(), started_at=started)
        if args.retrieval_only:
            answerable = [q for q in questions if not q.unanswerable]
            found = await _run_all(answerable, lambda q: _search_once(retriever, scope, q), args.concurrency)
            summary = summarize_retrieval(found, skipped=len(questions) - len(answerable))
            return common(kind="retrieval", retrieval=summary), found
        results = await _full_run(args, folio, scope, questions)
        model = settings.thorough_model if args.profile == "thorough" else settings.folio_model_fast
        return common(kind="full", model=model, full=summarize(results)), results


async def _check_documents(
    retriever: SearchIndex, scope: Scope, questions: Sequence[GoldenQuestion], *, named: bool
) -> None:
    """Stop when none of the files the golden truth cites is in the scope (every score would be 0); warn when some
    are missing. `named`: the container was chosen on the command line rather than left at the sample."""
    cited = list(dict.fromkeys(key.rsplit("#page=", 1)[0] for question in questions for key in question.pages))
    held = {indexed.file for container in scope.containers for indexed in await retriever.files(container)}
    missing = [file for file in cited if file not in held]
    if cited and len(missing) == len(cited):
        raise InvalidInput(messages.golden_not_indexed(missing, scope.describe(), named=named))
    if missing:
        print(messages.golden_partly_indexed(missing, scope.describe()), file=sys.stderr)


async def _run_all(
    questions: Sequence[GoldenQuestion], work: Callable[[GoldenQuestion], Awaitable[T]], concurrency: int
) -> list[T]:
    """`work` on every question, `concurrency` at a time, results in question order, with a progress bar."""
    gate = asyncio.Semaphore(concurrency)
    with ProgressBar(len(questions), "Evaluating") as bar:

        async def one(question: GoldenQuestion) -> T:
            async with gate:
                result = await work(question)
            bar.advance(question.question)
            return result

        return list(await asyncio.gather(*(one(q) for q in questions)))


async def _search_once(retriever: Retriever, scope: Scope, question: GoldenQuestion) -> RetrievalResult:
    started = time.perf_counter()
    try:
        chunks = await retriever.search(question.question, scope, top=max(HIT_DEPTHS))
    except Exception as exc:  # recorded as this question's error; the run goes on
        error = f"{type(exc).__name__}: {exc}"
        return RetrievalResult(line=question.line, question=question.question, truth=question.pages, error=error)
    return retrieval_result(question, chunks, seconds=time.perf_counter() - started)


async def _full_run(
    args: argparse.Namespace, folio: Folio, scope: Scope, questions: list[GoldenQuestion]
) -> list[QuestionResult]:
    from bot.cli.turn import ask_once, terminal_services, terminal_thread
    from bot.evaluation.judge import judge
    from bot.turns import InMemory, SilentView

    conversations = InMemory()
    services = terminal_services(folio, scope, conversations=conversations, timeout=folio.turn_timeout)
    profile: Profile = args.profile

    async def one(question: GoldenQuestion) -> QuestionResult:
        started, thread = time.perf_counter(), f"eval-{question.line}"
        try:
            answer = await ask_once(question.question, services, SilentView(), thread=thread, profile=profile)
        except Exception as exc:  # recorded as this question's error; the run goes on
            return score_question(question, failed(exc, seconds=time.perf_counter() - started))
        conversation = await conversations.load(terminal_thread(thread))
        sources = conversation.sources if conversation is not None else {}
        outcome = outcome_of(answer, sources, seconds=time.perf_counter() - started)
        grades = None
        if args.judge and folio.model is not None:  # _evaluate checked that a full run has a model
            grades = await judge(folio.model, model=args.judge, question=question, outcome=outcome, sources=sources)
        return score_question(question, outcome, grades)

    return await _run_all(questions, one, args.concurrency)


def _print_comparison(old: RunRecord, old_results: list[Result], new: RunRecord, new_results: Sequence[Result]) -> None:
    if old.kind != new.kind:
        raise InvalidInput(
            f"The baseline is a {old.kind} run and this one is a {new.kind} run: compare like with like."
        )
    print("\n" + compare(old, new))
    moved = changed_questions(old_results, new_results)
    print("\n" + ("\n".join(moved) if moved else "no question changed its score."))
