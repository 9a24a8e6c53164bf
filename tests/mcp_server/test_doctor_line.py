"""`folio doctor` says whether agents can reach Folio (MCP) and whether the identity provider's keys answer."""

from __future__ import annotations

from bot.app.mcp_check import mcp_check
from bot.config import Settings
from tests.fakes.jwks import FakeIdentityProvider


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


async def test_off_says_how_to_turn_it_on() -> None:
    check = await mcp_check(settings())
    assert check.status == "skip" and "FOLIO_MCP=true" in check.fix


async def test_on_without_an_address_names_the_setting() -> None:
    check = await mcp_check(settings(folio_mcp=True))
    assert check.status == "fail" and "FOLIO_PUBLIC_URL" in check.summary


async def test_on_with_the_identity_providers_keys_answering() -> None:
    with FakeIdentityProvider() as idp:
        check = await mcp_check(
            settings(
                folio_mcp=True,
                folio_public_url="https://folio.example",
                folio_oidc_issuer=idp.issuer,
                folio_oidc_audience=idp.audience,
                folio_oidc_jwks_url=idp.jwks_url,
            )
        )
        assert idp.fetches == 1
    assert check.status == "ok" and "https://folio.example/mcp" in check.summary
    assert check.facts["keys"] == 1 and idp.issuer in check.summary


async def test_keys_that_do_not_answer_fail_naming_the_setting() -> None:
    with FakeIdentityProvider() as idp:
        dead = idp.url + "/nowhere"
    check = await mcp_check(
        settings(
            folio_mcp=True,
            folio_public_url="https://folio.example",
            folio_oidc_issuer="https://idp.example",
            folio_oidc_audience="api://folio",
            folio_oidc_jwks_url=dead,
        )
    )
    assert check.status == "fail" and "FOLIO_OIDC_JWKS_URL" in check.fix


async def test_half_an_identity_provider_names_what_is_missing() -> None:
    check = await mcp_check(
        settings(folio_mcp=True, folio_public_url="https://folio.example", folio_oidc_issuer="https://idp.example")
    )
    assert check.status == "fail" and "FOLIO_OIDC_AUDIENCE and FOLIO_OIDC_JWKS_URL" in check.summary
