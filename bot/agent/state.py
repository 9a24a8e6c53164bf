"""Where a conversation's context lives: with the model service (`previous_response_id` chains each call) or with
Folio (every call resends the whole input), and the bounded items Folio keeps for the second case.

FOLIO_MODEL_STATE:
    server   chain by previous_response_id (OpenAI, Azure OpenAI)
    client   resend the thread's earlier items and this turn's items so far, with `store: false` (llama.cpp's
             server, which keeps no responses; or a provider where nothing should be stored)
    auto     server until the service answers HTTP 400 "does not support 'previous_response_id'": then client for
             the rest of the process, the refused call resent at once. Remembered per process, not in Redis: each
             replica pays one refused call once, and the switch needs no shared key (nor a way to undo a stale one
             when the operator points Folio at another server).

The items kept with a thread are groups, one per finished turn (its question, the model's function calls and
messages, and the tool outputs), trimmed oldest group first so that a call never loses its output.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

log = logging.getLogger(__name__)

StateMode = Literal["server", "client", "auto"]
Item = dict[str, Any]

# Output items a later call needs: messages, function calls, and the reasoning items before them (OpenAI refuses a
# function call resent without its reasoning item; asked for, they carry their encrypted content). Server-side tool
# runs (code interpreter) are not resent: their results are in the message text.
RESENT_TYPES = ("message", "function_call", "reasoning")


class ModelState:
    """The process's knowledge of how the model service keeps conversations (shared by every turn)."""

    def __init__(self, mode: StateMode = "auto") -> None:
        self.mode: StateMode = mode

    @property
    def stateless(self) -> bool:
        """Whether every call resends the whole input (client mode, chosen or learned)."""
        return self.mode == "client"

    @property
    def keeps_items(self) -> bool:
        """Whether a thread's items are kept with it: in client mode, chosen or learned. Not in auto mode before it
        learned: the record stays readable by a release without `model_items` (see Conversation), and a thread whose
        next turn learns that the service keeps nothing is restated from its turns (a turn that chained no call
        holds only its question and answer, which the restatement carries)."""
        return self.mode == "client"

    def learn_stateless(self) -> bool:
        """The service refused previous_response_id: switch to client mode when auto; False when FOLIO_MODEL_STATE
        says server (the operator's choice stands, and the refusal is shown)."""
        if self.mode != "auto":
            return self.mode == "client"
        self.mode = "client"
        log.warning(
            "the model service keeps no responses (it refused previous_response_id): Folio resends each "
            "conversation's items from now on; set FOLIO_MODEL_STATE=client to skip this first refusal"
        )
        return True


def resendable(output: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    """The output items of one response that a later call resends as input: messages and function calls, as sent
    (the decoded reply's own objects, never changed)."""
    return tuple(item for item in output if item.get("type") in RESENT_TYPES)


def flattened(groups: Sequence[Sequence[Item]]) -> list[Item]:
    return [item for group in groups for item in group]


def bounded(groups: Sequence[Sequence[Item]], *, max_chars: int) -> list[list[Item]]:
    """The newest groups whose JSON fits in `max_chars`, oldest dropped first; the newest is kept whatever its size
    (a follow-up needs at least the turn before it)."""
    kept: list[list[Item]] = []
    total = 0
    for group in reversed(groups):
        size = len(json.dumps(group, ensure_ascii=False, separators=(",", ":")))
        if kept and total + size > max_chars:
            break
        kept.append(list(group))
        total += size
    kept.reverse()
    return kept


def assistant_message(text: str, number: int) -> Item:
    """An earlier answer restated as an output message: the one assistant form both OpenAI's schema and llama.cpp's
    server accept (llama.cpp refuses `{"role": "assistant", "content": "..."}` as an item of unknown type)."""
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {
        "type": "message",
        "id": f"msg_history_{number}",
        "role": "assistant",
        "status": "completed",
        "content": [part],
    }
