"""Slack's own Bolt assistant template, run over HTTP against the bench fakes, to compare Folio with it.

    python benchmarks/bench.py --app template --template DIR    # DIR: a clone of slack-samples/bolt-python-assistant-template

The template (https://github.com/slack-samples/bolt-python-assistant-template, MIT, not part of Folio and not copied
here) answers a person in an assistant thread: `assistant.threads.setStatus`, `conversations.replies`, one Chat
Completions call, `say`. It is written for Socket Mode and a synchronous `App`; here its listeners are registered on
an `App` whose requests arrive over HTTP (a threading HTTP/1.1 server, kept-alive connections as Folio's aiohttp
server gives them), with a listener pool large enough not to be the limit. `--shared-client` removes the one cost
the template need not pay: it builds a new `openai.OpenAI` client (and its TLS context) for every answer.

Reads SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL, OPENAI_API_KEY and OPENAI_BASE_URL.
"""

from __future__ import annotations

import argparse
import os
import sys
import types
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from slack_bolt import App, BoltRequest
from slack_sdk import WebClient

LISTENING = "The template is listening"
LISTENERS = 200  # threads for listeners: each waits ~0.9 s for the model, so the pool must hold every thread's turn


def build(template: str, *, shared_client: bool) -> App:
    """The template's listeners on an App pointed at the fakes."""
    sys.path.insert(0, template)
    from listeners import llm_caller, register_listeners  # the template's own modules

    client = WebClient(token=os.environ["SLACK_BOT_TOKEN"], base_url=os.environ["SLACK_API_URL"])
    app = App(client=client, signing_secret=os.environ["SLACK_SIGNING_SECRET"],
              listener_executor=ThreadPoolExecutor(max_workers=LISTENERS))  # fmt: skip
    register_listeners(app)
    if shared_client:
        import openai

        shared = openai.OpenAI()
        llm_caller.openai = types.SimpleNamespace(OpenAI=lambda **options: shared)
    return app


def serve(app: App, port: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            response = app.dispatch(BoltRequest(body=body, headers={k: [v] for k, v in self.headers.items()}))
            payload = (response.body or "").encode()
            self.send_response(response.status)
            for name, values in response.headers.items():
                for value in values:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"{LISTENING} on http://127.0.0.1:{port}/slack/events", file=sys.stderr, flush=True)
    server.serve_forever()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("template", help="a clone of slack-samples/bolt-python-assistant-template")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--shared-client", action="store_true", help="one OpenAI client for every answer")
    args = parser.parse_args()
    serve(build(args.template, shared_client=args.shared_client), args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
