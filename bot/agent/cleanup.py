"""Deleting a conversation's stored responses at the provider."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import openai
from openai import AsyncOpenAI

log = logging.getLogger(__name__)

PARALLEL_DELETES = 8

Outcome = Literal["deleted", "absent", "failed"]


@dataclass(frozen=True)
class Deletion:
    """What deleting a conversation's responses did."""

    left: list[str]  # ids that could NOT be deleted: kept for a later attempt
    deleted: int  # responses the service held and deleted now (not those it never kept, or no longer had)


async def delete_responses(model: AsyncOpenAI, response_ids: Sequence[str]) -> Deletion:
    """Delete every response. One the service does not have (HTTP 404: expired, deleted before, or never stored, as
    by a server that keeps nothing before Folio learned so) is not left, and not counted as deleted."""
    unique = list(dict.fromkeys(response_ids))
    gate = asyncio.Semaphore(PARALLEL_DELETES)

    async def delete(response_id: str) -> Outcome:
        async with gate:
            return await _delete(model, response_id)

    done = await asyncio.gather(*(delete(response_id) for response_id in unique))
    left = [response_id for response_id, outcome in zip(unique, done) if outcome == "failed"]
    return Deletion(left=left, deleted=done.count("deleted"))


async def _delete(model: AsyncOpenAI, response_id: str) -> Outcome:
    try:
        await model.responses.delete(response_id)
    except openai.NotFoundError:  # nothing left to remove there
        return "absent"
    except openai.APIError as exc:
        log.warning("could not delete response %s: %s", response_id, exc)
        return "failed"
    return "deleted"
