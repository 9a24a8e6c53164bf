"""`folio doctor`'s line for agents (MCP): is /mcp on, where, and does the identity provider's JWKS answer?

    check = await mcp_check(settings)   # never raises

Kept apart from bot.mcp (which sits above bot.app): the JWKS is fetched with PyJWT's client, as the server does.
"""

from __future__ import annotations

import asyncio

import jwt

from bot import messages
from bot.app.verdicts import Check
from bot.config import Settings

JWKS_TIMEOUT = 5.0


def _url(settings: Settings) -> str | None:
    if settings.folio_mcp_url:
        return settings.folio_mcp_url.rstrip("/")
    return settings.folio_public_url.rstrip("/") + "/mcp" if settings.folio_public_url else None


def _fetch_keys(url: str) -> int:
    """How many signing keys `url` serves (blocking)."""
    return len(jwt.PyJWKClient(url, cache_jwk_set=False, timeout=JWKS_TIMEOUT).get_jwk_set().keys)


async def mcp_check(settings: Settings) -> Check:
    """MCP's line: off (how to turn it on), misconfigured (what to set), or on with what signs agents in."""
    if not settings.folio_mcp:
        return Check(
            "mcp",
            "skip",
            "off: /mcp is not served (`folio mcp` over stdio works with a Folio token)",
            "set FOLIO_MCP=true to let agents reach Folio at /mcp (docs/mcp.md)",
        )
    url = _url(settings)
    if url is None:
        return Check("mcp", "fail", messages.MCP_URL_NEEDED, "set FOLIO_PUBLIC_URL or FOLIO_MCP_URL")
    oidc = {
        "FOLIO_OIDC_ISSUER": settings.folio_oidc_issuer,
        "FOLIO_OIDC_AUDIENCE": settings.folio_oidc_audience,
        "FOLIO_OIDC_JWKS_URL": settings.folio_oidc_jwks_url,
    }
    missing = [name for name, value in oidc.items() if not value]
    if len(missing) == len(oidc):
        return Check(
            "mcp",
            "ok",
            f"on at {url}; Folio tokens only (no identity provider: FOLIO_OIDC_* unset)",
            facts={"url": url, "oidc": False},
        )
    if missing:
        text = messages.MCP_OIDC_PARTIAL.format(missing=" and ".join(missing))
        return Check("mcp", "fail", text, f"set {', '.join(missing)}")
    jwks = settings.folio_oidc_jwks_url or ""
    try:
        keys = await asyncio.to_thread(_fetch_keys, jwks)
    except jwt.PyJWKClientError as exc:
        return Check(
            "mcp",
            "fail",
            f"on at {url}, but the identity provider's keys at {jwks} did not load: {exc}",
            "check FOLIO_OIDC_JWKS_URL (the provider's jwks_uri, from its .well-known/openid-configuration)",
        )
    return Check(
        "mcp",
        "ok",
        f"on at {url}; sign-in by {settings.folio_oidc_issuer} ({keys} signing keys)",
        facts={"url": url, "oidc": True, "keys": keys},
    )
