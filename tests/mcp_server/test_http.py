"""Agents over Streamable HTTP at /mcp inside `folio serve`: the official MCP client, tokens of a local identity
provider, and exactly the access each person has in a direct message with Folio."""

from __future__ import annotations

import asyncio

import httpx2
import jwt
import pytest

from bot import messages
from bot.cli.serve import ServeHooks, serve
from bot.config import load_settings
from tests.fakes.jwks import FakeIdentityProvider
from tests.fakes.slack_api import FakeSlack, FakeSocketMode
from tests.mcp_server.conftest import agent, serving
from tests.slack.harness import wait_until

pytestmark = pytest.mark.usefixtures("environment")


async def search(url: str, token: str, query: str, tags: list[str] | None = None) -> dict:
    async with agent(url, token) as client:
        result = await client.call_tool("search_documents", {"query": query, **({"tags": tags} if tags else {})})
    assert not result.is_error, result.content
    return result.structured_content


async def test_a_person_sees_only_their_containers_passages(idp: FakeIdentityProvider) -> None:
    async with serving() as served:
        ana = await search(served.mcp, idp.token("ana@example.com"), "refund window annual plans")
        ben = await search(served.mcp, idp.token("ben@example.com"), "refund window annual plans")
    assert ana["containers"] == ["finance", "handbook"]
    assert any(p["container"] == "finance" and p["file"].startswith("refund_policy") for p in ana["passages"])
    passage = next(p for p in ana["passages"] if p["container"] == "finance")
    assert passage["page"] >= 1 and passage["link"].startswith("http://127.0.0.1:8080/view/finance/")
    assert ben["containers"] == ["handbook"]
    assert {p["container"] for p in ben["passages"]} <= {"handbook"}


async def test_the_tools_are_described_for_a_model(idp: FakeIdentityProvider) -> None:
    async with serving() as served, agent(served.mcp, idp.token()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"search_documents", "read_page", "ask"}
    assert all(len(tool.description or "") > 80 for tool in tools.values())
    assert (
        tools["search_documents"].output_schema and "passages" in tools["search_documents"].output_schema["properties"]
    )
    assert tools["search_documents"].input_schema["properties"]["tags"]["description"]


async def test_no_token_is_401_pointing_at_the_metadata_that_names_the_identity_provider(
    idp: FakeIdentityProvider,
) -> None:
    async with serving() as served, httpx2.AsyncClient() as http:
        refused = await http.post(served.mcp, json=_initialize(), headers=_accept())
        pointer = refused.headers["www-authenticate"]
        metadata = await http.get(f"http://127.0.0.1:{served.port}/.well-known/oauth-protected-resource/mcp")
    assert refused.status_code == 401 and pointer.startswith("Bearer ")
    assert 'resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"' in pointer
    assert metadata.status_code == 200
    assert metadata.json()["authorization_servers"] == [idp.issuer]
    assert metadata.json()["resource"] == "http://127.0.0.1:8080/mcp"


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda idp: idp.forged(), id="forged signature"),
        pytest.param(lambda idp: idp.token(exp=1_700_000_000), id="expired"),
        pytest.param(lambda idp: idp.token(aud="api://another-app"), id="another audience"),
        pytest.param(lambda idp: idp.token(iss="https://evil.example/tenant"), id="wrong issuer"),
        pytest.param(lambda idp: idp.unsigned(), id="alg none"),
        pytest.param(lambda idp: idp.hmac_with_public_key(), id="HS256 keyed with the public key"),
        pytest.param(lambda idp: idp.token(email_verified=False), id="e-mail not verified"),
        pytest.param(lambda idp: idp.token("nobody@example.com"), id="nobody in Slack"),
        pytest.param(lambda idp: idp.token(None), id="no e-mail claim"),
        pytest.param(lambda idp: "folio_" + "x" * 43, id="a Folio token never issued"),
        pytest.param(lambda idp: "not a token", id="garbage"),
    ],
)
async def test_a_bad_token_is_401_and_nothing_is_searched(idp: FakeIdentityProvider, make) -> None:
    async with serving() as served, httpx2.AsyncClient() as http:
        headers = {**_accept(), "Authorization": f"Bearer {make(idp)}"}
        refused = await http.post(served.mcp, json=_call("search_documents", {"query": "refund"}), headers=headers)
    assert refused.status_code == 401
    assert "resource_metadata=" in refused.headers["www-authenticate"]


async def test_a_person_of_another_organisation_gets_nothing(idp: FakeIdentityProvider) -> None:
    async with serving() as served, agent(served.mcp, idp.token("gus@partner.example")) as client:
        result = await client.call_tool("search_documents", {"query": "refund window"})
        asked = await client.call_tool("ask", {"question": "What is the refund window?"})
    assert result.is_error and messages.OUTSIDER_REFUSED in result.content[0].text
    assert result.structured_content is None
    assert asked.is_error and messages.OUTSIDER_REFUSED in asked.content[0].text


async def test_tag_filters_only_narrow(idp: FakeIdentityProvider) -> None:
    async with serving() as served, agent(served.mcp, idp.token("ben@example.com")) as client:
        unknown = await client.call_tool("search_documents", {"query": "refund", "tags": ["container:finance"]})
        malformed = await client.call_tool("search_documents", {"query": "refund", "tags": ["finance"]})
        narrowed = await client.call_tool("search_documents", {"query": "refund", "tags": ["year:2025"]})
    assert unknown.is_error and "container" in unknown.content[0].text
    assert malformed.is_error and "key:value" in malformed.content[0].text
    assert not narrowed.is_error and narrowed.structured_content["containers"] == ["handbook"]
    assert narrowed.structured_content["passages"] == []  # the handbook carries no year tag


async def test_a_huge_query_is_refused_with_what_to_do(idp: FakeIdentityProvider) -> None:
    async with serving() as served, agent(served.mcp, idp.token()) as client:
        result = await client.call_tool("search_documents", {"query": "refund " * 2000})
    assert result.is_error and "2000 characters" in result.content[0].text


async def test_read_page_reads_only_documents_the_person_may_read(idp: FakeIdentityProvider) -> None:
    async with serving() as served:
        async with agent(served.mcp, idp.token("ana@example.com")) as client:
            page = await client.call_tool("read_page", {"document": "refund_policy_2025.pdf", "page": 1})
            past = await client.call_tool("read_page", {"document": "refund_policy_2025.pdf", "page": 99})
        async with agent(served.mcp, idp.token("ben@example.com")) as client:
            outside = await client.call_tool("read_page", {"document": "refund_policy_2025.pdf", "page": 1})
            tricks = [
                await client.call_tool("read_page", {"document": name, "page": 1})
                for name in (
                    "../finance/refund_policy_2025.pdf",
                    "finance/refund_policy_2025.pdf",
                    "..",
                    "/etc/passwd",
                    "refund_policy_2025.pdf\x00.pdf",
                    "*.pdf",
                )
            ]
    assert not page.is_error and "refund" in page.structured_content["text"].lower()
    assert page.structured_content["container"] == "finance" and page.structured_content["pages"] >= 1
    assert past.is_error and "ask for a page from 1 to" in past.content[0].text
    assert outside.is_error and "not among the documents you may read" in outside.content[0].text
    assert all(result.is_error and "not among the documents" in result.content[0].text for result in tricks)


def _accept() -> dict[str, str]:
    return {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _initialize() -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }


def _call(tool: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


async def test_the_persons_rate_cap_applies_to_agents(
    idp: FakeIdentityProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOLIO_USER_QUESTIONS_PER_MINUTE", "2")
    async with serving() as served, agent(served.mcp, idp.token("ana@example.com")) as client:
        calls = [await client.call_tool("search_documents", {"query": "refund window"}) for _ in range(3)]
        other = await client.call_tool("read_page", {"document": "refund_policy_2025.pdf", "page": 1})
    assert [call.is_error for call in calls] == [False, False, True]
    assert "faster than 2 questions a minute" in calls[2].content[0].text
    assert other.is_error  # the same cap, whichever tool


async def test_an_oversized_request_is_refused_before_it_is_read(idp: FakeIdentityProvider) -> None:
    async with serving() as served, httpx2.AsyncClient() as http:
        headers = {**_accept(), "Authorization": f"Bearer {idp.token()}"}
        body = _call("search_documents", {"query": "x" * 2_000_000})
        refused = await http.post(served.mcp, json=body, headers=headers)
    assert refused.status_code == 413


async def test_socket_mode_serves_agents_on_port(idp: FakeIdentityProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeSlack() as slack, FakeSocketMode(slack) as socket:
        slack.emails["ana@example.com"] = "U0ANA0001"
        monkeypatch.setenv("SLACK_API_URL", slack.base_url)
        monkeypatch.setenv("SLACK_APP_TOKEN", slack.app_token)
        stop, ports = asyncio.Event(), []
        server = asyncio.create_task(
            serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=stop, started=ports.append))
        )
        await wait_until(lambda: (socket.connected and ports) or server.done())
        async with agent(f"http://127.0.0.1:{ports[0]}/mcp", idp.token("ana@example.com")) as client:
            found = await client.call_tool("search_documents", {"query": "workplace safety"})
        stop.set()
        assert await server == 0
    assert not found.is_error and found.structured_content["containers"] == ["handbook"]


async def test_slack_down_while_signing_in_is_503_saying_so_not_401(
    idp: FakeIdentityProvider, slack: FakeSlack
) -> None:
    slack.fail("users.lookupByEmail", "internal_error", times=5)
    async with serving() as served, httpx2.AsyncClient() as http:
        headers = {**_accept(), "Authorization": f"Bearer {idp.token('ben@example.com')}"}
        answered = await http.post(served.mcp, json=_call("search_documents", {"query": "refund"}), headers=headers)
    assert answered.status_code == 503
    assert answered.json()["error_description"] == messages.ACCESS_UNKNOWN


async def test_a_request_for_another_host_is_refused(idp: FakeIdentityProvider) -> None:
    """DNS rebinding: a page of another site that resolves its own name to Folio's address reaches no tool."""
    async with serving() as served, httpx2.AsyncClient() as http:
        headers = {**_accept(), "Authorization": f"Bearer {idp.token()}", "Host": "evil.example"}
        refused = await http.post(served.mcp, json=_call("search_documents", {"query": "refund"}), headers=headers)
    assert refused.status_code in (400, 403, 421)


async def test_tokens_naming_unknown_keys_do_not_make_folio_hammer_the_identity_provider(
    idp: FakeIdentityProvider,
) -> None:
    async with serving() as served, httpx2.AsyncClient() as http:
        for n in range(6):
            token = jwt.encode(idp.claims("ana@example.com"), "x" * 32, algorithm="HS256", headers={"kid": f"k{n}"})
            forged = jwt.encode(idp.claims("ana@example.com"), idp.key, algorithm="RS256", headers={"kid": f"r{n}"})
            for bad in (token, forged):
                headers = {**_accept(), "Authorization": f"Bearer {bad}"}
                refused = await http.post(served.mcp, json=_call("search_documents", {"query": "x"}), headers=headers)
                assert refused.status_code == 401
    assert idp.fetches <= 2  # PyJWT refetches the key set for an unknown key id at most every 30 s
