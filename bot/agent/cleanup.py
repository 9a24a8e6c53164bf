"""Deleting a conversation's stored responses at the provider."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import openai
from openai import AsyncOpenAI

log = logging.getLogger(__name__)

PARALLEL_DELETES = 8


async def delete_responses(model: AsyncOpenAI, response_ids: Sequence[str]) -> list[str]:
    """Delete every response; return the ids that could NOT be deleted (one already gone counts as deleted)."""
    unique = list(dict.fromkeys(response_ids))
    gate = asyncio.Semaphore(PARALLEL_DELETES)

    async def delete(response_id: str) -> bool:
        async with gate:
            return await _delete(model, response_id)

    done = await asyncio.gather(*(delete(response_id) for response_id in unique))
    return [response_id for response_id, ok in zip(unique, done) if not ok]


async def _delete(model: AsyncOpenAI, response_id: str) -> bool:
    try:
        await model.responses.delete(response_id)
    except openai.NotFoundError:  # expired or deleted before: nothing left to remove
        return True
    except openai.APIError as exc:
        log.warning("could not delete response %s: %s", response_id, exc)
        return False
    return True
