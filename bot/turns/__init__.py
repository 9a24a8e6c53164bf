"""One turn for every surface: lock, scope, forget, agent, record. See `bot.turns.turn`.

take_turn(request, services=TurnServices(...), view=..., observer=TurnRecorder(request))
"""

from bot.turns.observer import TurnObserver, TurnRecorder
from bot.turns.request import TurnRequest
from bot.turns.scope import FixedScope, PolicyScopes, Scopes, TurnScope
from bot.turns.services import Conversations, InMemory, TurnServices
from bot.turns.turn import UNRESOLVED, new_conversation, take_turn
from bot.turns.view import SilentView, TurnView

__all__ = [
    "UNRESOLVED",
    "Conversations",
    "FixedScope",
    "InMemory",
    "PolicyScopes",
    "Scopes",
    "SilentView",
    "TurnObserver",
    "TurnRecorder",
    "TurnRequest",
    "TurnScope",
    "TurnServices",
    "TurnView",
    "new_conversation",
    "take_turn",
]
