"""GET /documents/<container>/<file>?expires=..&signature=..: the PDF a signed citation link opens, in the browser.

`folio serve` adds the route to the Slack HTTP app; in Socket Mode, where Slack needs no HTTP server,
`serve_documents` runs it alone on PORT so links under FOLIO_PUBLIC_URL still open.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import PurePath
from urllib.parse import quote

from aiohttp import web

from bot import messages
from bot.documents import ROUTE_PREFIX, DocumentStore, Links, check_link
from bot.models import INDEXABLE
from bot.slack.site import Bind, ReadyCheck, ops_routes, running_site
from bot.viewer.cache import PageCache
from bot.viewer.server import Viewer

log = logging.getLogger(__name__)

ROUTE = ROUTE_PREFIX + "/{container}/{file}"


@dataclass(frozen=True)
class DocumentServer:
    """What the documents route needs: Folio's copies and the key its links are signed with."""

    store: DocumentStore
    key: bytes = field(repr=False)  # never in logs

    @classmethod
    def for_links(cls, links: Links) -> DocumentServer | None:
        """The server of the links `links` makes, or None when they are not signed links to Folio's copies."""
        if links.documents is None or links.key is None or not links.public_url:
            return None
        return cls(store=links.documents, key=links.key)

    def routes(self) -> list[web.RouteDef]:
        """GET /documents/{container}/{file}, and the viewer's /view/... pages that citation links open."""
        viewer = Viewer(store=self.store, key=self.key, pages=PageCache(self.store))
        return [web.get(ROUTE, self.handle), *viewer.routes()]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """The file for a valid, unexpired link; 403 for a bad or expired one, 410 for a document removed from
        Folio, 404 for a file Folio no longer has for another reason."""
        container, file = request.match_info["container"], request.match_info["file"]
        verdict = check_link(
            self.key,
            container,
            file,
            expires=request.query.get("expires", ""),
            given=request.query.get("signature", ""),
            now=time.time(),
        )
        if not verdict.ok:
            log.info("document link refused (%s): %s", verdict.reason, request.path)
            return web.Response(status=403, text=messages.LINK_REFUSED + "\n")
        path = self.store.stored(container, file)
        if path is None:
            removed = self.store.removed(container, file)
            if removed is not None:
                return web.Response(status=410, text=messages.document_removed(file, removed) + "\n")
            return web.Response(status=404, text=messages.DOCUMENT_GONE + "\n")
        return web.FileResponse(path, headers=_headers(file))  # streamed from disk, with Range for PDF viewers


def _headers(file: str) -> dict[str, str]:
    kind = INDEXABLE.get(PurePath(file).suffix.lower(), "application/octet-stream")  # never guessed to be a PDF
    return {
        "Content-Type": f"{kind}; charset=utf-8" if kind.startswith("text/") else kind,
        # inline: the browser shows it (and honours #page=N) instead of downloading it; RFC 6266 name encoding.
        "Content-Disposition": f"inline; filename*=UTF-8''{quote(file, safe='')}",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "private, max-age=3600",
    }


@asynccontextmanager
async def serve_documents(
    server: DocumentServer | None,
    bind: Bind,
    *,
    started: Callable[[int], None] | None = None,
    ready: ReadyCheck | None = None,
) -> AsyncIterator[None]:
    """Serve only the documents route (and /healthz, /readyz, /metrics) where `bind` says while the block runs;
    nothing when None."""
    if server is None:
        yield
        return

    application = web.Application()
    application.add_routes(server.routes())
    application.add_routes(ops_routes(ready))
    announce = f"Folio serves document links on {{url}}{ROUTE_PREFIX}/"
    async with running_site(application, bind, announce=announce, started=started):
        yield
