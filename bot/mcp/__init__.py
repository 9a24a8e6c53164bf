"""Folio for agents (Claude, ChatGPT, Cursor, VS Code) over the Model Context Protocol, as the person who signed in.

identity  bearer token -> Slack person: Folio-issued tokens, or the organisation's OIDC JWTs (e-mail -> Slack)
scope     what that person may search: exactly their access in a direct message with Folio
tools     search_documents, read_page (plain functions); turn: ask, the one turn of bot.turns
server    the SDK's MCPServer over Streamable HTTP (inside `folio serve`, stateless) or stdio (`folio mcp`)
asgi      the SDK's ASGI app served by Folio's aiohttp server

May import app, turns and below; never slack or cli (DESIGN.md).
"""
