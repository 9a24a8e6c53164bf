"""Optional check of citations: one cheap model call per cited page asks whether it supports its sentences.

Each check is a model call the turn pays for: it is reported like every other (a ModelCalled event, so usage,
budgets and the trace count it once) and its tokens are added to the turn's usage."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from bot.agent import prompts
from bot.agent.events import ModelCalled
from bot.agent.provider_errors import model_call
from bot.agent.turn_state import TurnState
from bot.agent.wire import ModelReply, create, request_body
from bot.citations import Rendered
from bot.errors import FolioError
from bot.models import Chunk, Usage

log = logging.getLogger(__name__)


async def unsupported_labels(turn: TurnState, rendered: Rendered, known: Mapping[str, Chunk]) -> list[int]:
    """Labels whose page the model judged not to support the sentences citing it (errors count as supported)."""
    checks = []
    for citation in rendered.citations:
        passage = "\n".join(c.text for c in known.values() if c.file == citation.file and c.cited_page == citation.page)
        claim = " ".join(_sentence(rendered.text, m.start) for m in rendered.markers if m.label == citation.label)
        prompt = prompts.fill("verify", claim=claim, title=citation.title, page=citation.page or "-", passage=passage)
        checks.append(_supported(turn, prompt))
    verdicts = await asyncio.gather(*checks)
    return [c.label for c, ok in zip(rendered.citations, verdicts) if not ok]


def _sentence(text: str, end: int) -> str:
    start = max(text.rfind(". ", 0, end), text.rfind("\n", 0, end)) + 1
    return text[start:end].strip()


async def _supported(turn: TurnState, prompt: str) -> bool:
    """One check, counted as the turn's model call whatever its end."""
    model_name = turn.options.model_fast
    reply: ModelReply | None = None
    try:
        async with model_call(turn.model, model=model_name, profile=turn.profile, chained=False) as end:
            reply = await create(turn.model, request_body({"model": model_name, "input": prompt, "store": False}))
    except FolioError as exc:  # a check that cannot run must not hide the answer
        log.warning("citation check failed: %s", exc)
        return True
    finally:
        await turn.tools.events(_called(turn.profile, model_name, end.outcome, end.seconds, reply))
    turn.model_calls += 1
    if reply.has_usage:
        turn.usage = turn.usage + Usage(input_tokens=reply.input_tokens, output_tokens=reply.output_tokens)
    return "UNSUPPORTED" not in reply.output_text.upper()


def _called(profile: str, model: str, outcome: str, seconds: float, reply: ModelReply | None) -> ModelCalled:
    if reply is None:
        return ModelCalled(profile, outcome, seconds, model)
    return ModelCalled(profile, outcome, seconds, model, reply.input_tokens, reply.cached_tokens, reply.output_tokens)
