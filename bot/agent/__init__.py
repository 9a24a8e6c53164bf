"""The agent turn: a Responses API tool loop (rewrite, search, code) whose every citation is checked.

    run_turn(question, conversation, model=..., retriever=..., options=..., run=RunOptions(...)) -> Answer
    delete_responses(model, response_ids) -> Deletion (the ids that could not be deleted, how many were)

Imports only models, errors, messages, citations and the retrieval protocol; never Slack.
"""

from typing import TYPE_CHECKING, Any

from bot.agent.options import AgentOptions, RunOptions, no_link

if TYPE_CHECKING:
    from bot.agent.cleanup import delete_responses
    from bot.agent.loop import run_turn

_LAZY = {"run_turn": "bot.agent.loop", "delete_responses": "bot.agent.cleanup"}  # they load the openai SDK


def __getattr__(name: str) -> Any:
    """`run_turn` and `delete_responses` on first use: `bot.agent.quotes` (search) does not need the SDK."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name]), name)


__all__ = ["AgentOptions", "RunOptions", "delete_responses", "no_link", "run_turn"]
