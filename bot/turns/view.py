"""What a person sees of a turn: the `TurnView` protocol, one method per thing shown, and the view that shows nothing.

A surface chooses its view once per turn (Slack: a stream or the status line; the terminal: its status line; an
eval: `SilentView`) and hands it to `answer`; the turn never asks which view it holds.
"""

from __future__ import annotations

from typing import Protocol

from bot.agent.events import AnswerText, Step
from bot.models import Answer, Scope


class TurnView(Protocol):
    """The places a turn shows itself. Every method but `answer` and `failed` is best effort and never raises."""

    async def working(self, title: str) -> None:
        """Work began ("Working on it..."): the first thing the person sees."""

    def writes_text(self) -> bool:
        """Whether this view shows the answer as the model writes it (then `text` hears each piece)."""

    def shown_ts(self) -> str | None:
        """The id of the message that shows the turn now (a stream, a placeholder), where there is one."""

    async def step_started(self, step: Step) -> None:
        """A step began: "Searching: payment terms Acme"."""

    async def step_ended(self, step: Step) -> None:
        """A step ended (done or failed), with what it found."""

    async def text(self, piece: AnswerText) -> None:
        """A checked piece of the answer as it is written (only when `writes_text()`)."""

    async def answer(self, answer: Answer, *, scope: Scope, turn_index: int, basis: str | None) -> str | None:
        """Show the final, checked answer; returns the id of the message that shows it, where there is one."""

    async def notice(self, text: str) -> None:
        """One more sentence after the answer (e.g. that the conversation could not be saved)."""

    async def failed(self, error: BaseException) -> str | None:
        """Say what went wrong and what to do; never raises. Returns the id of the message that says it."""


class SilentView:
    """A view nobody watches (`folio eval`): it shows nothing."""

    async def working(self, title: str) -> None:
        return None

    def writes_text(self) -> bool:
        return False

    def shown_ts(self) -> str | None:
        return None

    async def step_started(self, step: Step) -> None:
        return None

    async def step_ended(self, step: Step) -> None:
        return None

    async def text(self, piece: AnswerText) -> None:
        return None

    async def answer(self, answer: Answer, *, scope: Scope, turn_index: int, basis: str | None) -> str | None:
        return None

    async def notice(self, text: str) -> None:
        return None

    async def failed(self, error: BaseException) -> str | None:
        return None
