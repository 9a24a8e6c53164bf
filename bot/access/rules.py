"""The `access:` rules as pure functions: what one person may search in direct messages and the assistant.

A person's containers are the union of what their Slack user groups give, what their own user ID gives, and the
default. Nothing here asks Slack: the caller passes the policy's group keys the person belongs to (found by
`bot.access.membership`), so Slack's answers can only switch a rule the admin wrote on or off, never add a container.
The same function answers a turn, `/ask access` and `folio access USER_ID`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot import messages
from bot.config import AccessRules, ChannelPolicy, Prompt
from bot.errors import NotConnected
from bot.models import Scope

MAX_PROMPTS = 4  # Slack shows at most four suggested prompts


@dataclass(frozen=True)
class Grant:
    """What one person may search, and the rules that gave it, e.g. `group finance-team: finance`."""

    user: str
    containers: tuple[str, ...]  # sorted; empty when no rule gives the person anything
    matched: tuple[str, ...]
    member_of: tuple[str, ...] = ()  # the policy's groups (handles or IDs, as written) the person is in

    def scope(self) -> Scope:
        """The person's containers as a Scope, or NotConnected saying how an admin gives them some."""
        if not self.containers:
            raise NotConnected(messages.NO_ACCESS)
        return Scope(containers=self.containers)


def grant_for(rules: AccessRules, *, user: str, groups: Iterable[str]) -> Grant:
    """The containers `user` may search, given the policy group keys (handles or IDs as written) they belong to."""
    member_of = set(groups)
    containers: set[str] = set()
    matched: list[str] = []
    for key, names in rules.groups.items():
        if key in member_of:
            containers.update(names)
            matched.append(f"group {key}: {', '.join(names)}")
    if user in rules.users:
        containers.update(rules.users[user])
        matched.append(f"user {user}: {', '.join(rules.users[user])}")
    if rules.default:
        containers.update(rules.default)
        matched.append(f"default: {', '.join(rules.default)}")
    in_groups = tuple(key for key in rules.groups if key in member_of)
    return Grant(user=user, containers=tuple(sorted(containers)), matched=tuple(matched), member_of=in_groups)


def prompts_for(policy: ChannelPolicy, containers: Iterable[str]) -> tuple[Prompt, ...]:
    """Up to four suggested prompts for someone who searches `containers`: the policy's `prompts:` for each
    container in turn, or one plain question about the container where the policy has none."""
    chosen: list[Prompt] = []
    for container in containers:
        title, message = messages.default_prompt(container)
        chosen.extend(policy.prompts.get(container) or (Prompt(title=title, message=message),))
    return tuple(dict.fromkeys(chosen))[:MAX_PROMPTS]


def outsider_dm_scope(policy: ChannelPolicy, user: str) -> Scope | None:
    """What a person of another organisation may search in a DM (the rule bot.turns.boundary applies to their
    turns): only the containers an `access: users:` rule names for them, or the `dm:` rule's when it says
    `external: allow` and there are no access rules; None: nothing (they are refused)."""
    named = policy.access.users.get(user) if policy.access is not None else None
    if named:
        return Scope(containers=tuple(named))
    if policy.access is None and policy.dm is not None and policy.dm.external == "allow":
        return policy.dm.scope()
    return None
