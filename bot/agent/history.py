"""Rebuilding a conversation's context from its stored turns, when the provider no longer holds it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.agent import prompts
from bot.agent.state import assistant_message
from bot.models import Citation, Turn

HISTORY_TURNS = 10  # the most recent turns resent; older ones rarely matter and cost tokens


def history_items(turns: Sequence[Turn], *, outputs: bool = False) -> list[dict[str, Any]]:
    """Input items restating the recent turns: a note, then each question and its answer with its references.
    `outputs`: answers as output messages, for servers that take no other assistant form (see bot.agent.state)."""
    # Output form: `system`, a role every chat template knows (llama-server hands the role to the model's template)
    items: list[dict[str, Any]] = [{"role": "system" if outputs else "developer", "content": prompts.load("history")}]
    for number, turn in enumerate([turn for turn in turns if not turn.set_aside][-HISTORY_TURNS:], 1):
        items.append({"role": "user", "content": turn.question})  # set-aside turns skipped: see Conversation.forget
        answer = _answer_with_references(turn)
        items.append(assistant_message(answer, number) if outputs else {"role": "assistant", "content": answer})
    return items


def _answer_with_references(turn: Turn) -> str:
    if not turn.citations:
        return turn.answer
    return turn.answer + "\n\nReferences: " + "; ".join(_reference(c) for c in turn.citations)


def _reference(citation: Citation) -> str:
    page = f", page {citation.page}" if citation.page is not None else ""
    return f"[{citation.label}] {citation.title}{page}"


def trimmed_history_items(turns: Sequence[Turn], *, outputs: bool = False) -> list[dict[str, Any]]:
    """The history once more after the model found it too long: without its passages, and without the older half of
    the recent turns (none at all when there is only one)."""
    recent = [turn for turn in turns if not turn.set_aside][-HISTORY_TURNS:]
    kept = recent[len(recent) // 2 + len(recent) % 2 :]
    return history_items(kept, outputs=outputs) if kept else []
