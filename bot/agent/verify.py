"""Optional check of citations: one cheap model call per cited page asks whether it supports its sentences."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot.agent import prompts
from bot.agent.options import AgentOptions
from bot.citations import Rendered
from bot.models import Chunk

if TYPE_CHECKING:  # the SDK loads with the first model call: `folio ask` without a model never needs it
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)


async def unsupported_labels(
    model: AsyncOpenAI, options: AgentOptions, rendered: Rendered, known: Mapping[str, Chunk]
) -> list[int]:
    """Labels whose page the model judged not to support the sentences citing it (errors count as supported)."""
    checks = []
    for citation in rendered.citations:
        passage = "\n".join(c.text for c in known.values() if c.file == citation.file and c.cited_page == citation.page)
        claim = " ".join(_sentence(rendered.text, m.start) for m in rendered.markers if m.label == citation.label)
        prompt = prompts.fill("verify", claim=claim, title=citation.title, page=citation.page or "-", passage=passage)
        checks.append(_supported(model, options, prompt))
    verdicts = await asyncio.gather(*checks)
    return [c.label for c, ok in zip(rendered.citations, verdicts) if not ok]


def _sentence(text: str, end: int) -> str:
    start = max(text.rfind(". ", 0, end), text.rfind("\n", 0, end)) + 1
    return text[start:end].strip()


async def _supported(model: AsyncOpenAI, options: AgentOptions, prompt: str) -> bool:
    import openai

    try:
        response = await model.responses.create(model=options.model_fast, input=prompt, store=False)
    except openai.APIError as exc:  # a check that cannot run must not hide the answer
        log.warning("citation check failed: %s", exc)
        return True
    return "UNSUPPORTED" not in response.output_text.upper()
