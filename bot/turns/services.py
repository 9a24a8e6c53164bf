"""What a turn runs on: `TurnServices`, and where conversations live (Redis for Slack, memory for the terminal)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from bot.agent import AgentOptions
from bot.models import Conversation
from bot.retrieval import SearchIndex
from bot.store import ThreadKey
from bot.turns.request import TurnRequest
from bot.turns.scope import Scopes
from bot.turns.thread_files import ThreadFiles

if TYPE_CHECKING:  # the SDK loads with the first model call (`folio ask` without a model never needs it)
    from openai import AsyncOpenAI


class Conversations(Protocol):
    """Where a surface keeps its conversations (`bot.store.ConversationStore` in Redis; `InMemory` for the terminal)."""

    def lock(self, thread: ThreadKey) -> AbstractAsyncContextManager[object]: ...

    async def load(self, thread: ThreadKey) -> Conversation | None: ...

    async def save(self, thread: ThreadKey, conversation: Conversation, *, release: object = None) -> None:
        """Save; `release`: the thread's lock the turn holds, which the store may release with the save."""

    async def delete(self, thread: ThreadKey) -> None: ...

    async def add_response(self, thread: ThreadKey, response_id: str) -> None: ...

    async def remember_message(self, thread: ThreadKey, ts: str) -> None: ...


@dataclass
class InMemory:
    """The terminal's conversations: held in this process for as long as the command runs.

    `load` hands out a copy, so a turn cancelled halfway (Ctrl-C) leaves its conversation as it was."""

    _saved: dict[ThreadKey, Conversation] = field(default_factory=dict)
    _locks: dict[ThreadKey, asyncio.Lock] = field(default_factory=dict)

    def lock(self, thread: ThreadKey) -> asyncio.Lock:
        return self._locks.setdefault(thread, asyncio.Lock())

    async def load(self, thread: ThreadKey) -> Conversation | None:
        saved = self._saved.get(thread)
        return saved.model_copy(deep=True) if saved is not None else None

    async def save(self, thread: ThreadKey, conversation: Conversation, *, release: object = None) -> None:
        self._saved[thread] = conversation.model_copy(deep=True)

    async def delete(self, thread: ThreadKey) -> None:
        self._saved.pop(thread, None)

    async def add_response(self, thread: ThreadKey, response_id: str) -> None:
        return None  # the terminal deletes no stored responses: the answer's own ids are all there is

    async def remember_message(self, thread: ThreadKey, ts: str) -> None:
        return None


async def at_once() -> None:
    """Admission for surfaces without a gate: every turn starts at once."""


async def unlimited(request: object) -> None:
    """The guard of surfaces without budgets or rate caps (the terminal, an eval)."""


@dataclass(frozen=True, kw_only=True)
class TurnServices:
    """Everything a turn needs, whatever the surface; built by the surface from the `Folio` it was given."""

    model: AsyncOpenAI | None  # None: search-only answers
    retriever: SearchIndex
    options: AgentOptions
    conversations: Conversations
    scopes: Scopes
    timeout: float | None  # seconds the agent may take for the answer (None: as long as it takes)
    admit: Callable[[], Awaitable[None]] = at_once  # waits while the event loop is too busy to start one more turn
    guard: Callable[[TurnRequest], Awaitable[None]] = unlimited  # raises OverLimit (bot.turns.budget) to refuse
    files: ThreadFiles | None = None  # reads files shared in a thread (None: the surface shares none)
