"""`folio mcp` over stdio, started the way an agent starts it (Claude Desktop, Cursor, VS Code), driven by the
official MCP client: the person FOLIO_MCP_TOKEN names, and nobody once the token is revoked."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from bot.cli import main
from tests.conftest import ROOT
from tests.mcp_server.conftest import BEN

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("environment")]


async def token_for(user: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """A new token for `user` (the last line `create` prints) and its id (the first word of its first line)."""
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["access", "token", "create", "--user", user, "--expires", "1d"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    return lines[-1], lines[0].split()[0]


def folio_mcp(token: str, cwd: Path) -> StdioServerParameters:
    """`python -m bot mcp` with this test's settings and the token, as an agent's configuration starts it."""
    env = {name: value for name, value in os.environ.items() if name.startswith(("FOLIO_", "SLACK_", "REDIS_"))}
    env.update({"FOLIO_MCP_TOKEN": token, "PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)})
    env.pop("OPENAI_API_KEY", None)
    return StdioServerParameters(command=sys.executable, args=["-m", "bot", "mcp"], env=env, cwd=str(cwd))


async def test_folio_mcp_answers_as_the_tokens_person(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token, _ = await token_for(BEN, capsys)
    async with Client(folio_mcp(token, tmp_path), read_timeout_seconds=60) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        found = await client.call_tool("search_documents", {"query": "workplace safety program"})
        outside = await client.call_tool("read_page", {"document": "refund_policy_2025.pdf", "page": 1})
    assert tools == {"search_documents", "read_page", "ask"}
    assert not found.is_error and found.structured_content["containers"] == ["handbook"]
    assert found.structured_content["passages"]
    assert outside.is_error and "not among the documents you may read" in outside.content[0].text


async def test_a_revoked_token_stops_working_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token, token_id = await token_for(BEN, capsys)
    async with Client(folio_mcp(token, tmp_path), read_timeout_seconds=60) as client:
        assert not (await client.call_tool("search_documents", {"query": "workplace safety"})).is_error
        assert await asyncio.to_thread(main, ["access", "token", "revoke", token_id]) == 0
        refused = await client.call_tool("search_documents", {"query": "workplace safety"})
    assert refused.is_error and "FOLIO_MCP_TOKEN is not a valid Folio token" in refused.content[0].text
