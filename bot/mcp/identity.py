"""Who is asking over MCP: a bearer token becomes a Slack person, or nobody (401, nothing searched).

    folio_...   a Folio-issued token (`folio access token create`), checked against its digest in Redis
    eyJ...      a JWT of the organisation's identity provider (FOLIO_OIDC_*): signature by the provider's JWKS,
                issuer, audience and expiry checked by PyJWT; its e-mail claim -> the Slack person
                (users.lookupByEmail, cached: bot.access.emails)

`PersonVerifier` is the MCP SDK's `TokenVerifier`: the SDK's bearer middleware calls it on every request and answers
401 with `WWW-Authenticate: Bearer ... resource_metadata="..."` when it returns None. Only asymmetric algorithms are
taken, and only the one the provider's key is for: `alg: none` and HS256 signed with the public key are refused
before any signature is checked. An e-mail the provider says is unverified (`email_verified: false`) is refused.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Literal, Protocol

import jwt
from mcp.server.auth.provider import AccessToken

from bot import metrics
from bot.access.emails import SlackPerson
from bot.store.tokens import FolioTokens, looks_like_folio_token

log = logging.getLogger(__name__)

# The algorithms of public-key signatures; never HS* (a shared secret) nor none.
ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
LEEWAY = 60  # seconds of clock difference forgiven on exp / nbf / iat
JWKS_TIMEOUT = 5.0  # seconds one fetch of the provider's keys may take
MAX_TOKEN_CHARS = 16_000  # a bearer token longer than this is refused unread


@dataclass(frozen=True)
class Person:
    """A Slack person an agent acts for, and how the token said so."""

    user: str  # Slack user ID
    team: str  # the person's home workspace as Slack said it ("": not said; Slack's users.info decides)
    via: Literal["folio", "oidc"]
    expires: int | None = None  # Unix time the token stops being valid


@dataclass(frozen=True, kw_only=True)
class Oidc:
    """The identity provider's settings (FOLIO_OIDC_*)."""

    issuer: str
    audience: str
    jwks_url: str
    email_claim: str = "email"


class Directory(Protocol):
    """E-mail -> Slack person (`bot.access.emails.People`)."""

    async def by_email(self, email: str) -> SlackPerson | None: ...


class JwtChecker:
    """Checks an identity provider's JWT and returns its e-mail claim; None for any token Folio must not take."""

    def __init__(self, oidc: Oidc) -> None:
        self._oidc = oidc
        # PyJWT keeps the key set 5 minutes and refetches on an unknown key id at most every 30 s (its cooldown)
        self._keys = jwt.PyJWKClient(oidc.jwks_url, cache_jwk_set=True, lifespan=300, timeout=JWKS_TIMEOUT)

    async def email(self, token: str) -> tuple[str, int] | None:
        """(the e-mail, the expiry) of a valid token; None (and a log line saying why) otherwise."""
        try:
            algorithm = jwt.get_unverified_header(token).get("alg")
            if algorithm not in ASYMMETRIC:
                log.info("MCP token refused: algorithm %r is not a public-key signature", algorithm)
                return None
            key = await asyncio.to_thread(self._keys.get_signing_key_from_jwt, token)  # urllib: off the loop
            if key.algorithm_name and key.algorithm_name != algorithm:
                log.info("MCP token refused: signed %s with a %s key", algorithm, key.algorithm_name)
                return None
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=self._oidc.audience,
                issuer=self._oidc.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWKClientConnectionError as exc:
            log.warning("MCP token refused: the identity provider's keys (FOLIO_OIDC_JWKS_URL) did not load: %s", exc)
            return None
        except jwt.PyJWTError as exc:  # bad signature, wrong issuer or audience, expired, unknown key, malformed
            log.info("MCP token refused: %s", exc)
            return None
        return _email_of(claims, self._oidc.email_claim)


def _email_of(claims: dict[str, object], claim: str) -> tuple[str, int] | None:
    email, verified = claims.get(claim), claims.get("email_verified", True)
    if verified is False or (isinstance(verified, str) and verified.lower() == "false"):
        log.info("MCP token refused: the identity provider says the e-mail is not verified")
        return None
    if not isinstance(email, str) or "@" not in email:
        log.info("MCP token refused: no e-mail in its %r claim (set FOLIO_OIDC_EMAIL_CLAIM)", claim)
        return None
    expires = claims.get("exp")
    return email, int(expires) if isinstance(expires, int | float) else 0


class PersonVerifier:
    """The SDK's TokenVerifier: a Folio token or an identity provider's JWT -> the Slack person it acts for."""

    def __init__(self, *, tokens: FolioTokens, jwts: JwtChecker | None, people: Directory | None) -> None:
        self._tokens, self._jwts, self._people = tokens, jwts, people

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's hook: an AccessToken naming the person (client_id: their Slack ID), or None (401)."""
        person = await self.person(token)
        metrics.mcp_auth(person.via if person else "refused")
        if person is None:
            return None
        return AccessToken(
            token=token,
            client_id=person.user,
            scopes=[],
            expires_at=person.expires,
            subject=person.user,
            claims={"team": person.team, "via": person.via},
        )

    async def person(self, token: str) -> Person | None:
        """The person `token` acts for; None for a token Folio does not take."""
        token = token.strip()
        if not token or len(token) > MAX_TOKEN_CHARS:
            return None
        if looks_like_folio_token(token):
            record = await self._tokens.check(token)
            # the person's organisation is asked of Slack on each request (users.info, cached), not taken from the
            # record: a token made for someone who later became a guest of another organisation gives nothing
            return Person(record.user, "", "folio", int(record.expires)) if record else None
        if self._jwts is None or self._people is None:
            return None  # no identity provider configured: only Folio tokens are taken
        found = await self._jwts.email(token)
        if found is None:
            return None
        email, expires = found
        slack = await self._people.by_email(email)
        if slack is None:
            log.info("MCP token refused: no Slack person has the token's e-mail address")
            return None
        return Person(slack.user, slack.team, "oidc", expires or None)


def person_of(access: AccessToken) -> Person:
    """The person a verified AccessToken names (as `PersonVerifier` made it)."""
    claims = access.claims or {}
    via: Literal["folio", "oidc"] = "oidc" if claims.get("via") == "oidc" else "folio"
    return Person(access.client_id, str(claims.get("team") or ""), via, access.expires_at)
