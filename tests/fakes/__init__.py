"""HTTP fakes of the services Folio cannot run here (Slack, the Responses API, Azure AI Search).

Each listens on 127.0.0.1 in a background thread, speaks the service's wire format, and is driven by the real SDK.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# How often a fake's server thread looks whether it was asked to stop (socketserver's `poll_interval`): closing a fake
# waits up to this long, and most tests close two or three fakes (at 0.05 s that was about 25 s of a quick run).
POLL_INTERVAL = 0.01


class Loopback:
    """A fake's HTTP server on 127.0.0.1 (a free port), answering from a daemon thread once started."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, name: str | None = None) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self.server.serve_forever, args=(POLL_INTERVAL,), name=name, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> Loopback:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
