"""Access per person: what someone may search in a direct message or Slack's assistant container.

rules       the `access:` rules as pure functions: a person's containers and which rule gave them
membership  Slack user group and channel membership, cached in Redis with FOLIO_ACCESS_TTL
organisation  Slack Connect: channels shared outside the organisation, people of other ones, cached in Redis
directory   the per-turn decision (the viewed channel, the person's grant, or today's `dm:` rule)
"""

from bot.access.directory import Access, AssistantThread, ScopeChoice
from bot.access.membership import Memberships
from bot.access.organisation import Organisation
from bot.access.rules import MAX_PROMPTS, Grant, grant_for, outsider_dm_scope, prompts_for

__all__ = [
    "MAX_PROMPTS",
    "Access",
    "AssistantThread",
    "Grant",
    "Memberships",
    "Organisation",
    "ScopeChoice",
    "grant_for",
    "outsider_dm_scope",
    "prompts_for",
]
