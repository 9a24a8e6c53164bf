"""The agent turn: a Responses API tool loop (rewrite, search, code) whose every citation is checked.

    run_turn(question, conversation, model=..., retriever=..., options=...) -> Answer
    delete_responses(model, response_ids) -> ids that could not be deleted

Imports only models, errors, messages, citations and the retrieval protocol; never Slack.
"""

from bot.agent.cleanup import delete_responses
from bot.agent.loop import run_turn
from bot.agent.options import AgentOptions, no_link

__all__ = ["AgentOptions", "delete_responses", "no_link", "run_turn"]
