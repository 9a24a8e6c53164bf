"""The mutable state of one agent turn, shared by the loop (bot.agent.loop) and its model calls
(bot.agent.model_calls)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.agent.options import AgentOptions
from bot.agent.tools import ToolContext, TraceStep
from bot.models import Answer, Conversation, Profile, ToolCall, Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI


@dataclass
class TurnState:
    """The mutable state of one turn."""

    question: str
    conversation: Conversation
    model: AsyncOpenAI
    options: AgentOptions
    profile: Profile
    tools: ToolContext
    response_ids: list[str] = field(default_factory=list)
    model_calls: int = 0  # calls that answered (a service told not to store leaves no id to count by)
    tool_calls: list[ToolCall] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    usage: Usage = Usage()
    cap_hit: bool = False
    stream: bool = False  # report the answer's text as it is written (AnswerText events)
    drafts: int = 0  # streamed model calls so far
    shown_code: set[str] = field(default_factory=set)  # code runs a streamed call reported as they ended
    # Everything the model has seen in this turn's chain (what a call resends when the service keeps no
    # responses, see bot.agent.state), and where this turn's question stands in it.
    context: list[dict[str, Any]] = field(default_factory=list)
    asked_at: int = 0
    earlier_dropped: bool = False  # the thread's earlier items were too long for the model: keep none of them
    restated: bool = False  # the chain began with the thread's turns restated (as output messages): keep those too

    def charged(self, answer: Answer) -> Answer:
        """`answer` with what this turn used: its tool calls, the responses it created, its model calls, its tokens,
        the cap."""
        spent = {
            "tool_calls": tuple(self.tool_calls),
            "response_ids": tuple(self.response_ids),
            "model_calls": self.model_calls,
            "usage": self.usage,
            "cap_hit": self.cap_hit,
        }
        return answer.model_copy(update=spent)
