"""`ask` over MCP is the one turn: checked citations with links, counted in `folio usage` for the person and the
surface; Folio-issued tokens made, listed and revoked with `folio access token`."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from prometheus_client import REGISTRY

from bot.cli import main
from tests.fakes.jwks import FakeIdentityProvider
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.mcp_server.conftest import ANA, agent, serving

pytestmark = pytest.mark.usefixtures("environment")


async def folio(*argv: str) -> int:
    """`folio ARGV...` as a person runs it (in a thread: the command runs its own event loop)."""
    return await asyncio.to_thread(main, list(argv))


async def usage_rows(capsys: pytest.CaptureFixture[str], by: str) -> dict[str, dict]:
    capsys.readouterr()
    assert await folio("usage", "--by", by, "--json") == 0
    return {row[by]: row for row in json.loads(capsys.readouterr().out)}


async def test_ask_returns_checked_citations_and_is_counted_for_the_person(
    idp: FakeIdentityProvider, fake_model: FakeResponses, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = ("folio_surface_turns_total", {"surface": "mcp", "outcome": "answered"})
    calls = ("folio_mcp_calls_total", {"tool": "ask", "outcome": "ok"})
    metrics_before = [REGISTRY.get_sample_value(*sample) or 0 for sample in (turns, calls)]
    before_user = (await usage_rows(capsys, "user")).get(ANA)
    before_surface = (await usage_rows(capsys, "surface")).get("mcp")
    fake_model.script(
        tools(search("refund window annual plans")), reply("Annual plans are refunded within 30 days [S1].")
    )
    async with serving() as served, agent(served.mcp, idp.token("ana@example.com")) as client:
        result = await client.call_tool("ask", {"question": "What is the refund window for annual plans?"})
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer["answer"].startswith("Annual plans are refunded within 30 days [1]")
    assert "[S1]" not in answer["answer"]  # the model's marker became the citation's label
    [cited] = answer["citations"]
    assert cited["label"] == 1 and cited["container"] == "finance" and cited["file"].startswith("refund_policy")
    assert cited["link"].startswith("http://127.0.0.1:8080/view/finance/refund_policy")
    assert "Sources:" in result.content[0].text and cited["link"] in result.content[0].text

    after_user, after_surface = (await usage_rows(capsys, "user"))[ANA], (await usage_rows(capsys, "surface"))["mcp"]
    assert after_user["turns"] == (before_user["turns"] if before_user else 0) + 1
    assert after_user["model_calls"] == (before_user["model_calls"] if before_user else 0) + 2
    assert after_surface["turns"] == (before_surface["turns"] if before_surface else 0) + 1
    assert [REGISTRY.get_sample_value(*sample) for sample in (turns, calls)] == [n + 1 for n in metrics_before]


async def test_a_folio_token_acts_as_its_person_until_revoked(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert await folio("access", "token", "create", "--user", ANA, "--expires", "90d", "--label", "ci") == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    assert token.startswith("folio_")
    assert await folio("access", "token", "list") == 0
    [listed] = [line for line in capsys.readouterr().out.splitlines() if line.endswith("  ci") and ANA in line]
    assert token not in listed  # never shown again
    token_id = listed.split()[0]

    async with serving() as served:
        async with agent(served.mcp, token) as client:
            found = await client.call_tool("search_documents", {"query": "refund window"})
        assert not found.is_error and "finance" in found.structured_content["containers"]
        assert await folio("access", "token", "revoke", token_id) == 0
        async with httpx2.AsyncClient() as http:
            refused = await http.post(
                served.mcp,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
            )
    assert refused.status_code == 401 and "resource_metadata=" in refused.headers["www-authenticate"]


def test_a_token_for_a_name_or_a_bad_duration_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["access", "token", "create", "--user", "ana"]) == 2
    assert "user ID" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["access", "token", "create", "--user", ANA, "--expires", "forever"])
    assert "90d or 12h" in capsys.readouterr().err


def test_folio_mcp_without_a_token_says_how_to_get_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp"]) == 2
    assert "folio access token create --user" in capsys.readouterr().err
