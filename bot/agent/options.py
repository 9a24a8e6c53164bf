"""The agent's settings: a small frozen value built by `bot.app.open_folio` from Settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bot.agent.events import Listener
from bot.agent.state import ModelState
from bot.models import Chunk, Profile


def no_link(chunk: Chunk) -> str | None:
    """The default `link_for`: citations carry no URL."""
    return None


@dataclass(frozen=True, kw_only=True)
class AgentOptions:
    """How one turn runs: models and effort per profile, which tools, and its limits."""

    model_fast: str
    model_thorough: str
    effort_fast: str = "low"
    effort_thorough: str = "high"
    reasoning: bool = True  # send reasoning={"effort": ...}; off for models without it
    code_interpreter: bool = True  # offer the code_interpreter tool; off for servers that do not run it
    max_iterations: int = 6  # model calls per turn; the last one may not call tools
    chunk_budget: int = 24  # passages shown to the model per turn
    search_top: int = 6  # passages one search returns
    verify_citations: bool = False  # one extra model call per cited passage
    max_question_chars: int = 4000  # a longer question is refused, saying so (bot.turns.turn.check_question)
    link_for: Callable[[Chunk], str | None] = no_link  # URL opening the chunk's PDF at its page
    # Whether the service chains by previous_response_id or Folio resends the input (FOLIO_MODEL_STATE): one value
    # shared by every turn of the process, so that auto mode learns once (bot.agent.state).
    model_state: ModelState = field(default_factory=ModelState)
    history_chars: int = 48_000  # client mode: the most characters of earlier turns' items kept with a thread

    def model_for(self, profile: Profile) -> str:
        return self.model_thorough if profile == "thorough" else self.model_fast

    def effort_for(self, profile: Profile) -> str:
        return self.effort_thorough if profile == "thorough" else self.effort_fast


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """How this one turn runs, as the surface asking wants it (AgentOptions are every turn's): its profile, who
    hears its steps, and whether they hear the answer's text as the model writes it."""

    profile: Profile | None = None  # None: the conversation's
    events: Listener | None = None  # hears each step as it starts and ends (bot.agent.events); None: nobody
    stream: bool = False  # events also hear the answer's text, checked, as it is written (AnswerText)
