"""`McpFolio`: what serving MCP needs, built once from the Folio `open_folio` yields (checked at start).

The Folio must be a serving one (a store and a Slack client): Folio's rules are written for Slack people, so a
person's access, organisation and e-mail are asked of Slack (and cached in Redis like every other lookup).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot import messages
from bot.access import Access
from bot.access.emails import People
from bot.app import Folio
from bot.config import ChannelPolicy, Settings
from bot.errors import ConfigurationError
from bot.mcp.identity import JwtChecker, Oidc, PersonVerifier
from bot.store import ConversationStore
from bot.store.tokens import FolioTokens, tokens_of
from bot.turns.budget import Budget
from bot.turns.governance import Ledger

MCP_PATH = "/mcp"


def oidc_of(settings: Settings) -> Oidc | None:
    """The identity provider's settings, None when none is set; ConfigurationError when only some are."""
    values = {
        "FOLIO_OIDC_ISSUER": settings.folio_oidc_issuer,
        "FOLIO_OIDC_AUDIENCE": settings.folio_oidc_audience,
        "FOLIO_OIDC_JWKS_URL": settings.folio_oidc_jwks_url,
    }
    missing = [name for name, value in values.items() if not value]
    if len(missing) == len(values):
        return None
    if missing:
        raise ConfigurationError(messages.MCP_OIDC_PARTIAL.format(missing=" and ".join(missing)))
    return Oidc(
        issuer=settings.folio_oidc_issuer or "",
        audience=settings.folio_oidc_audience or "",
        jwks_url=settings.folio_oidc_jwks_url or "",
        email_claim=settings.folio_oidc_email_claim,
    )


def mcp_url(settings: Settings) -> str | None:
    """Where agents reach /mcp: FOLIO_MCP_URL, else FOLIO_PUBLIC_URL + /mcp; None when neither is set."""
    if settings.folio_mcp_url:
        return settings.folio_mcp_url.rstrip("/")
    if settings.folio_public_url:
        return settings.folio_public_url.rstrip("/") + MCP_PATH
    return None


@dataclass(frozen=True, kw_only=True)
class McpFolio:
    """A Folio serving agents: its store, Slack-backed access rules, and the token checks."""

    folio: Folio
    store: ConversationStore
    access: Access

    @classmethod
    def of(cls, folio: Folio) -> McpFolio:
        """`folio` ready for MCP, or ConfigurationError saying what to set."""
        if folio.store is None or folio.slack is None or folio.access is None:
            raise ConfigurationError(messages.MCP_SLACK_NEEDED)
        if folio.policy is None:
            raise folio.no_policy()
        oidc_of(folio.settings)  # a half-configured identity provider stops Folio at start, naming what is missing
        return cls(folio=folio, store=folio.store, access=folio.access)

    async def team(self) -> str:
        """Folio's own workspace (auth.test, asked once): the team of agents' threads."""
        return (await self.access.organisation.home())[0]

    @property
    def settings(self) -> Settings:
        return self.folio.settings

    def policy(self) -> ChannelPolicy:
        return self.folio.channel_policy()

    @property
    def ledger(self) -> Ledger:
        """Where agents' turns add their usage and keep their traces: the same stores as Slack's, built once."""
        assert self.folio.stores is not None  # present with a store (open_folio)
        return self.folio.stores.ledger

    @property
    def budget(self) -> Budget:
        """The same budgets and per-person rate cap as Slack's turns (built once by open_folio)."""
        assert self.folio.budget is not None  # present with a store (open_folio)
        return self.folio.budget

    @functools.cached_property
    def tokens(self) -> FolioTokens:
        return tokens_of(self.store)

    @functools.cached_property
    def verifier(self) -> PersonVerifier:
        """The bearer-token check: Folio tokens always; the identity provider's JWTs when FOLIO_OIDC_* are set."""
        oidc = oidc_of(self.settings)
        if oidc is None or self.folio.slack is None:
            return PersonVerifier(tokens=self.tokens, jwts=None, people=None)
        redis, prefix = self.store.keyspace("access")
        people = People(redis, self.folio.slack, prefix=prefix, ttl=self.settings.folio_access_ttl)
        return PersonVerifier(tokens=self.tokens, jwts=JwtChecker(oidc), people=people)


def allowed_hosts(url: str | None) -> list[str]:
    """The Host headers /mcp answers (DNS-rebinding protection): the public URL's, and loopback for local agents."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    if url:
        parts = urlsplit(url)
        if parts.hostname:
            hosts += [parts.netloc, parts.hostname, f"{parts.hostname}:*"]
    return hosts
