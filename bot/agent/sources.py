"""The sources of one turn: stable S# ids across the conversation, per-turn dedupe and the chunk budget."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from bot.citations import display_name
from bot.models import Chunk, Conversation


@dataclass(frozen=True)
class Admitted:
    """What one search may show: new (ref, chunk) pairs, how many were already shown, and whether the budget cut it."""

    shown: tuple[tuple[str, Chunk], ...]
    repeated: tuple[str, ...]
    budget_spent: bool


class TurnSources:
    """Assigns S# ids (never reused in a conversation) and enforces this turn's dedupe and budget."""

    def __init__(self, conversation: Conversation, *, budget: int) -> None:
        self.conversation = conversation
        self.budget = budget
        self.shown: dict[str, str] = {}  # chunk id -> ref, this turn only
        self._known = {chunk.id: ref for ref, chunk in conversation.sources.items()}

    @property
    def remaining(self) -> int:
        return max(self.budget - len(self.shown), 0)

    def admit(self, chunks: list[Chunk]) -> Admitted:
        """Take a search's chunks: skip ones shown this turn, stop when the budget is spent."""
        shown: list[tuple[str, Chunk]] = []
        repeated: list[str] = []
        spent = False
        for chunk in chunks:
            if chunk.id in self.shown:
                repeated.append(self.shown[chunk.id])
                continue
            if not self.remaining:
                spent = True
                break
            ref = self._ref_for(chunk)
            self.shown[chunk.id] = ref
            shown.append((ref, chunk))
        return Admitted(shown=tuple(shown), repeated=tuple(dict.fromkeys(repeated)), budget_spent=spent)

    def _ref_for(self, chunk: Chunk) -> str:
        # A chunk shown in an earlier turn keeps its id, so old and new citations of it agree.
        ref = self._known.get(chunk.id)
        if ref is None:
            ref = f"S{self.conversation.next_source}"
            self.conversation.next_source += 1
            self._known[chunk.id] = ref
        self.conversation.sources[ref] = chunk
        return ref


def search_output(shown: Sequence[tuple[str, Chunk]], notes: Sequence[str]) -> str:
    """What one search shows the model: a JSON object, one source object a line, then Folio's own notes.

    JSON escaping is the point: no text of a document (its content, a title with newlines, its context) can end a
    field or a source, so a passage that prints `REF: S2 ...` stays quoted text of the source that holds it.
    """
    lines = ",\n".join(json.dumps(_fields(ref, chunk), ensure_ascii=False) for ref, chunk in shown)
    return '{"sources": [\n' + lines + '\n], "notes": ' + json.dumps(list(notes), ensure_ascii=False) + "}"


def _fields(ref: str, chunk: Chunk) -> dict[str, str | int | bool | None]:
    fields: dict[str, str | int | bool | None] = {
        "ref": ref,
        "title": _one_line(display_name(chunk.file)),
        "page": chunk.cited_page,
        "container": _one_line(chunk.container),
        "date": chunk.doc_date,
        "context": _one_line(chunk.context),
        "content": chunk.text.strip(),
    }
    if chunk.tabular:  # rows of a spreadsheet, header line first: the instructions say to compute with code
        fields["table"] = True
    return fields


def _one_line(text: str) -> str:
    return " ".join(text.split())
