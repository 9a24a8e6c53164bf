"""Folio's MCP server (the official `mcp` SDK's MCPServer): three tools, over Streamable HTTP or stdio.

    http = McpHttp.of(mcp)                     # inside `folio serve`: routes() on its aiohttp server
    async with http.running(): ...             # the SDK's session manager (stateless: any replica answers)
    await serve_stdio(mcp, token=...)          # `folio mcp`: one person, named by a Folio token

Over HTTP Folio is an OAuth 2.1 resource server: every request's bearer token is checked (bot.mcp.identity); none or
a bad one is 401 with `WWW-Authenticate: Bearer ..., resource_metadata="<url>"`, and that URL serves the
protected-resource metadata naming the identity provider. Stateless: no session lives in a process, so any replica
answers any request. Over stdio the person is the one FOLIO_MCP_TOKEN names, checked again on every call (a revoked
token stops working at once).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlsplit

from aiohttp import web
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot import messages, metrics
from bot.errors import ConfigurationError, FolioError, InvalidInput, NotConnected, OverLimit, Refused
from bot.mcp import prompts
from bot.mcp.asgi import asgi_routes
from bot.mcp.identity import Person, person_of
from bot.mcp.results import AskResult, ask_result, ask_text, page_text, search_text
from bot.mcp.scope import mcp_request
from bot.mcp.services import MCP_PATH, McpFolio, allowed_hosts, mcp_url, oidc_of
from bot.mcp.tools import PageText, SearchResult, read_page, search_documents
from bot.mcp.turn import ask_as_agent

log = logging.getLogger(__name__)

Who = Callable[[Context], Awaitable[Person]]  # the person a tool call acts for
MAX_REQUEST_BYTES = 1 << 20  # one JSON-RPC message of an agent: a question is at most a few thousand characters


def outcome_of(error: FolioError) -> str:
    """The metric's outcome of a tool call that failed with `error`."""
    if isinstance(error, Refused | NotConnected | OverLimit):
        return "refused"
    return "invalid" if isinstance(error, InvalidInput) else "failed"


def _result(model: BaseModel, text: str) -> CallToolResult:
    """Structured content (for programs) plus the same as readable text (for the model)."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=model.model_dump(mode="json")
    )


@dataclass(frozen=True)
class FolioTools:
    """The tools, bound to one Folio and to how a call names its person."""

    mcp: McpFolio
    who: Who

    async def search_documents(
        self,
        query: Annotated[str, Field(description=prompts.QUERY)],
        ctx: Context,
        tags: Annotated[list[str] | None, Field(description=prompts.TAGS)] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        async def run() -> CallToolResult:
            found = await search_documents(self.mcp, await self.who(ctx), query=query, tags=tags)
            return _result(found, search_text(found))

        return await _counted("search_documents", run)

    async def read_page(
        self,
        document: Annotated[str, Field(description=prompts.DOCUMENT)],
        page: Annotated[int, Field(description=prompts.PAGE, ge=1, le=100_000)],
        ctx: Context,
    ) -> Annotated[CallToolResult, PageText]:
        async def run() -> CallToolResult:
            found = await read_page(self.mcp, await self.who(ctx), document=document, page=page)
            return _result(found, page_text(found))

        return await _counted("read_page", run)

    async def ask(
        self, question: Annotated[str, Field(description=prompts.QUESTION)], ctx: Context
    ) -> Annotated[CallToolResult, AskResult]:
        async def run() -> CallToolResult:
            request = await mcp_request(self.mcp, await self.who(ctx), question=question)
            answer = await ask_as_agent(self.mcp, request)
            return _result(ask_result(answer), ask_text(answer))

        return await _counted("ask", run)


async def _counted(tool: str, run: Callable[[], Awaitable[CallToolResult]]) -> CallToolResult:
    """Run a tool; a FolioError becomes the tool's error result (its sentence, for the agent); counted either way."""
    try:
        result = await run()
    except FolioError as exc:
        metrics.mcp_call(tool, outcome_of(exc))
        raise ToolError(str(exc)) from exc
    except TimeoutError as exc:
        metrics.mcp_call(tool, "failed")
        raise ToolError(messages.MCP_TIMED_OUT) from exc
    metrics.mcp_call(tool, "ok")
    return result


def build_server(mcp: McpFolio, who: Who, **auth: object) -> MCPServer:
    """The MCPServer with Folio's three tools; `auth` goes to MCPServer (token_verifier, auth) over HTTP."""
    server = MCPServer("folio", title="Folio", instructions=prompts.INSTRUCTIONS, **auth)  # type: ignore[arg-type]
    tools = FolioTools(mcp, who)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    server.tool(name="search_documents", description=prompts.SEARCH, annotations=read_only)(tools.search_documents)
    server.tool(name="read_page", description=prompts.READ_PAGE, annotations=read_only)(tools.read_page)
    server.tool(name="ask", description=prompts.ASK, annotations=read_only)(tools.ask)
    return server


async def person_of_request(ctx: Context) -> Person:
    """The person the SDK's bearer middleware verified for this HTTP request."""
    request = ctx.request_context.request
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    if not isinstance(user, AuthenticatedUser):  # the middleware lets no request through without one
        raise ToolError(messages.MCP_TOKEN_REFUSED)
    return person_of(user.access_token)


@dataclass(frozen=True)
class McpHttp:
    """/mcp and its protected-resource metadata, for `folio serve`'s aiohttp server."""

    server: MCPServer
    url: str

    @classmethod
    def of(cls, mcp: McpFolio) -> McpHttp:
        url = mcp_url(mcp.settings)
        if url is None:
            raise ConfigurationError(messages.MCP_URL_NEEDED)
        oidc = oidc_of(mcp.settings)
        issuer = oidc.issuer if oidc is not None else url  # Folio tokens only: no authorization server but Folio
        auth = AuthSettings(issuer_url=issuer, resource_server_url=url, validate_token_resource=False)  # type: ignore[arg-type]
        server = build_server(mcp, person_of_request, token_verifier=mcp.verifier, auth=auth)
        return cls(server, url)

    def routes(self) -> list[web.RouteDef]:
        """POST/GET/DELETE /mcp and GET /.well-known/oauth-protected-resource/<path>, through the SDK's app."""
        origin = urlsplit(self.url)
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=allowed_hosts(self.url),
            allowed_origins=[f"{origin.scheme}://{origin.netloc}", "http://127.0.0.1:*", "http://localhost:*"],
        )
        app = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            transport_security=security,
            max_request_body_size=MAX_REQUEST_BYTES,
        )
        app.add_exception_handler(Exception, unavailable)  # Starlette's outermost handler: before its plain 500
        metadata = urlsplit(str(build_resource_metadata_url(self.url))).path  # type: ignore[arg-type]
        return asgi_routes(app, paths=(MCP_PATH, metadata), max_body=MAX_REQUEST_BYTES)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The SDK's session manager, while the routes serve (call `routes()` first)."""
        async with self.server.session_manager.run():
            yield


async def unavailable(request: Request, exc: Exception) -> Response:
    """What a request gets when checking its token failed on the way (Redis or Slack could not be asked): 503 with
    the sentence saying so, never a 401 that would send the person to sign in again."""
    if isinstance(exc, FolioError):
        log.warning("MCP request refused for now: %s", exc)
        return JSONResponse({"error": "temporarily_unavailable", "error_description": str(exc)}, status_code=503)
    log.error("MCP request failed", exc_info=exc)
    return JSONResponse({"error": "server_error"}, status_code=500)


async def serve_stdio(mcp: McpFolio, *, token: str) -> None:
    """Speak MCP on stdin/stdout for the person `token` names, until the agent closes the pipe."""
    if await mcp.verifier.person(token) is None:
        raise FolioError(messages.MCP_TOKEN_REFUSED)

    async def who(ctx: Context) -> Person:
        person = await mcp.verifier.person(token)  # again each call: revoked or expired stops it at once
        if person is None:
            raise ToolError(messages.MCP_TOKEN_REFUSED)
        return person

    await build_server(mcp, who).run_stdio_async()
