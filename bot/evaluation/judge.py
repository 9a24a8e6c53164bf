"""`--judge MODEL`: a second model grades each answer's groundedness and correctness, 1 to 5."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from openai import AsyncOpenAI, OpenAIError
from pydantic import ValidationError

from bot.evaluation.golden import GoldenQuestion, page_key
from bot.evaluation.scoring import Judgement, TurnOutcome
from bot.models import Chunk

log = logging.getLogger(__name__)

PASSAGE_CHARS = 2000  # per cited passage: enough for a page's claim, bounded for the judge's context
GRADES_SCHEMA = {
    "type": "object",
    "properties": {
        "groundedness": {"type": "integer", "minimum": 1, "maximum": 5},
        "correctness": {"type": "integer", "minimum": 1, "maximum": 5},
        "reason": {"type": "string"},
    },
    "required": ["groundedness", "correctness", "reason"],
    "additionalProperties": False,
}


@cache
def instructions() -> str:
    return (Path(__file__).with_name("judge.md")).read_text(encoding="utf-8")


def judge_input(question: GoldenQuestion, outcome: TurnOutcome, sources: Mapping[str, Chunk]) -> str:
    """The text the judge reads: question, reference, answer, and the passages on the pages the answer cites."""
    reference = "This question cannot be answered from the documents." if question.unanswerable else question.truth
    cited = [c for c in sources.values() if c.page is not None and page_key(c.file, c.page) in outcome.cited]
    passages = "\n\n".join(f"[{c.file} page {c.page}]\n{c.text[:PASSAGE_CHARS]}" for c in cited) or "(none cited)"
    return (
        f"Question:\n{question.question}\n\nReference answer:\n{reference}\n\n"
        f"Answer to grade:\n{outcome.answer}\n\nPassages the answer cites:\n{passages}"
    )


async def judge(
    client: AsyncOpenAI, *, model: str, question: GoldenQuestion, outcome: TurnOutcome, sources: Mapping[str, Chunk]
) -> Judgement | None:
    """The judge's grades, or None (logged) when the judge fails or answers out of form."""
    try:
        response = await client.responses.create(
            model=model,
            instructions=instructions(),
            input=judge_input(question, outcome, sources),
            text={"format": {"type": "json_schema", "name": "grades", "schema": GRADES_SCHEMA, "strict": True}},
            store=False,
        )
        return Judgement.model_validate(json.loads(response.output_text))
    except (OpenAIError, ValueError, ValidationError) as exc:  # a grade is optional: never fail the run for it
        log.warning("judge failed on line %s: %s", question.line, exc)
        return None
