"""What an agent over MCP, and through it the person, reads when a tool cannot help."""

from __future__ import annotations

# Agents over MCP (bot.mcp): what an agent, and through it the person, reads when a tool cannot help
MCP_QUERY_TOO_LONG = "The query is longer than {limit} characters: search for the few words that matter."
MCP_TOO_MANY_TAGS = "At most {limit} tag filters at once, each key:value (for example doc_type:contract)."
MCP_NO_SUCH_DOCUMENT = (
    "{name!r} is not among the documents you may read. Use the file name exactly as search_documents gives it."
)
MCP_NO_SUCH_PAGE = "{name} has {pages} pages; ask for a page from 1 to {pages}."
MCP_NO_PAGES = "{name} has no pages to read (a table or a text file): use search_documents to find its passages."
MCP_NO_COPY = (
    "Folio keeps no copy of {name} to read pages from (FOLIO_DOCS_BASE_URL serves the files): open its link "
    "or use search_documents."
)
MCP_SLACK_NEEDED = (
    "MCP needs Slack to know who may read what: set SLACK_BOT_TOKEN (with the scopes users:read and "
    "users:read.email), then start again."
)
MCP_URL_NEEDED = (
    "FOLIO_MCP=true needs Folio's public address for agents and their sign-in: set FOLIO_PUBLIC_URL "
    "(or FOLIO_MCP_URL to the full URL of /mcp)."
)
MCP_TOKEN_NEEDED = (
    "`folio mcp` acts for one person: set FOLIO_MCP_TOKEN to a token from "
    "`folio access token create --user U0123ABCD` (run by an admin)."
)
MCP_TOKEN_REFUSED = (
    "FOLIO_MCP_TOKEN is not a valid Folio token (unknown, revoked or expired): ask an admin for a new one "
    "(`folio access token create --user YOUR_SLACK_ID`)."
)
MCP_OIDC_PARTIAL = (
    "Sign-in with an identity provider needs all of FOLIO_OIDC_ISSUER, FOLIO_OIDC_AUDIENCE and "
    "FOLIO_OIDC_JWKS_URL; {missing} not set."
)


def bad_duration(text: str) -> str:
    return f"{text!r} is not a duration: write it as a number of days or hours, e.g. 90d or 12h (at most 366d)."


MCP_TIMED_OUT = "The answer took too long and was stopped: ask a narrower question, or use search_documents."


__all__ = [
    "MCP_NO_COPY",
    "MCP_NO_PAGES",
    "MCP_NO_SUCH_DOCUMENT",
    "MCP_NO_SUCH_PAGE",
    "MCP_OIDC_PARTIAL",
    "MCP_QUERY_TOO_LONG",
    "MCP_SLACK_NEEDED",
    "MCP_TIMED_OUT",
    "MCP_TOKEN_NEEDED",
    "MCP_TOKEN_REFUSED",
    "MCP_TOO_MANY_TAGS",
    "MCP_URL_NEEDED",
    "bad_duration",
]
