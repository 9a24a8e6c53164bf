"""`folio mcp`: Folio as an MCP server on stdin/stdout, for one person's local agent (Claude Desktop, Cursor, VS
Code). The person is the one FOLIO_MCP_TOKEN names (`folio access token create --user U0123ABCD`); they search
exactly what they may search in a direct message with Folio. Over HTTP, `folio serve` with FOLIO_MCP=true serves
/mcp instead (see docs/mcp.md)."""

from __future__ import annotations

import argparse
import asyncio

from bot import messages
from bot.app import Given, open_folio, open_store
from bot.cli.common import HelpFormatter, settings_from
from bot.config import Settings
from bot.errors import ConfigurationError
from bot.mcp.server import serve_stdio
from bot.mcp.services import McpFolio


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve MCP on stdin/stdout for one person's agent (FOLIO_MCP_TOKEN)",
        description="Speak the Model Context Protocol on stdin/stdout, as the person FOLIO_MCP_TOKEN names: tools "
        "search_documents, read_page and ask over the documents that person may read. Agents start it themselves.",
        epilog="example (an agent's configuration runs it, with FOLIO_MCP_TOKEN in its environment):\n"
        "  folio mcp                     # or: folio --env-file /path/to/.env mcp\n"
        "see docs/mcp.md for Claude Desktop, Cursor and VS Code.",
        formatter_class=HelpFormatter,
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the agent closes stdin."""
    settings = settings_from(args)
    token = settings.folio_mcp_token
    if token is None:
        raise ConfigurationError(messages.MCP_TOKEN_NEEDED)
    asyncio.run(serve(settings, token=token.get_secret_value()))
    return 0


async def serve(settings: Settings, *, token: str) -> None:
    """Open Folio (the running server's Redis when there is one), then speak MCP until stdin closes."""
    async with (
        open_store(settings) as stores,
        open_folio(settings, Given(store=stores.conversations), serving=True) as folio,
    ):
        await serve_stdio(McpFolio.of(folio), token=token)
