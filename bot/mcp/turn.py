"""An agent's question as the one turn (bot.turns): the same lock, scope, refusals, budgets, agent, checked
citations, usage counters and trace as a question in Slack, with nothing shown along the way.

    answer = await ask_as_agent(mcp, request)   # request: bot.mcp.scope.mcp_request(..., question=...)

This is the one place an MCP call enters a turn. It runs the turn inline, not through the durable intake
(bot.turns.consumer): the agent waits on this very request for the answer, and an agent whose call fails asks again.
"""

from __future__ import annotations

from bot.mcp.scope import scopes
from bot.mcp.services import McpFolio
from bot.models import Answer
from bot.turns import SilentView, TurnRecorder, TurnRequest, TurnServices, take_turn


async def ask_as_agent(mcp: McpFolio, request: TurnRequest) -> Answer:
    """Answer `request` as a turn of surface "mcp": counted against the person's budgets, recorded and traced."""
    folio = mcp.folio
    services = TurnServices(
        model=folio.model,
        retriever=folio.retriever,
        options=folio.options,
        conversations=mcp.store,
        scopes=scopes(mcp),
        timeout=folio.turn_timeout,
        admit=folio.tasks.gate.wait_for_room,
        guard=mcp.budget.check,
    )
    observer = TurnRecorder(request, content=mcp.settings.folio_log_content, ledger=mcp.ledger, spawn=folio.tasks.spawn)
    return await take_turn(request, services=services, view=SilentView(), observer=observer)
