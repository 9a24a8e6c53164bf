"""The fakes `folio bench` runs Folio against, in their own process so the bench measures Folio, not them.

    python benchmarks/bench_fakes.py --model-latency-ms 300    # from the checkout root, with it on PYTHONPATH

Starts the fake Slack Web API and the fake Responses API (tests/fakes/) and prints one JSON line with their URLs.
The fake model plays a fixed turn: rewrite_query, then two search_documents calls in one batch, then an answer
citing the passages it was shown; each call waits the given latency. A side server reports, for the bench driver,
every answer message Folio posts or updates (`GET /answers?since=N`) and how many calls Folio made (`GET /stats`);
the process stops when stdin closes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from bot import messages
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, rewrite, search, tools
from tests.fakes.slack_api import FakeSlack

# Sentences Folio shows when a turn fails: the driver counts them as errors. Looked up by name, so a sentence
# renamed or removed in bot/messages.py drops out here instead of breaking the bench.
_FAILURE_NAMES = ("SEARCH_DOWN", "STORE_DOWN", "UNEXPECTED", "MODEL_UNAVAILABLE", "MODEL_DOWN", "TURN_TIMED_OUT",
                  "SLACK_FAILED", "NOT_SAVED", "NOT_IN_DOCUMENTS", "SCOPE_CHANGED", "CONVERSATION_GONE")
FAILURES = tuple(text for name in _FAILURE_NAMES if isinstance(text := getattr(messages, name, None), str))
ANSWER_MARK = "Bench answer"  # in every final answer of the fake model, so the driver can tell answers apart
_REF = re.compile(r"\bS\d+\b")


MODEL_CALLS = itertools.count(1)  # create requests answered (next() is atomic under the GIL)
_model_calls = 0


def scripted_turn(request: Request) -> Step:
    """rewrite -> two searches -> an answer citing up to two of the passages shown."""
    global _model_calls
    _model_calls = next(MODEL_CALLS)
    previous = {call["name"] for call in request.previous_calls()}
    if not request.tool_outputs:
        return tools(rewrite(request.user_text or "benefits"))
    if "rewrite_query" in previous:
        asked = next(iter(request.tool_outputs.values()))
        return tools(search(asked), search(f"{asked} costs and limits"))
    refs = list(dict.fromkeys(_REF.findall(" ".join(request.tool_outputs.values())))) or ["S1"]
    markers = "".join(f"[{ref}]" for ref in refs[:2])
    return reply(f"{ANSWER_MARK}: the plan documents cover this {markers}.")


class BenchSlack(FakeSlack):
    """The fake Slack, recording when each answer message first appears (wall clock, comparable across processes)."""

    def __init__(self) -> None:
        super().__init__(token="xoxb-bench")
        self.answers: list[dict[str, Any]] = []
        self._answered: set[tuple[str, str]] = set()
        self.counts: dict[str, int] = {}

    def _chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super()._chat_postMessage(params)
        if result.get("ok"):
            self._note(params, result["ts"], params.get("thread_ts"))
        return result

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super()._chat_update(params)
        if result.get("ok"):
            message = self.messages[(params["channel"], params["ts"])]
            self._note(params, message.ts, message.thread_ts)
        return result

    def _note(self, params: dict[str, Any], ts: str, thread_ts: str | None) -> None:
        # Called under the fake's lock. A message counts once, however often it is updated.
        shown = str(params.get("text", "")) + json.dumps(params.get("blocks") or [])
        key = (params["channel"], ts)
        answer = ANSWER_MARK in shown
        if (answer and key in self._answered) or not (answer or any(failure in shown for failure in FAILURES)):
            return  # an answer counts once; progress lines ("Reading your question…") are not recorded
        if answer:
            self._answered.add(key)
        self.answers.append({"channel": params["channel"], "thread_ts": thread_ts or ts, "ts": ts,
                             "answer": answer, "text": str(params.get("text", ""))[:200], "at": time.time()})

    def handle(self, method: str, params: dict[str, Any], token: str | None) -> Any:
        with self._lock:
            self.counts[method] = self.counts.get(method, 0) + 1
        return super().handle(method, params, token)

    def since(self, start: int) -> list[dict[str, Any]]:
        with self._lock:
            return self.answers[start:]


def _report_server(slack: BenchSlack) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            url = urlparse(self.path)
            if url.path == "/stats":  # how many calls Folio made of each fake
                with slack._lock:
                    stats = {"model_calls": _model_calls, "slack_calls": dict(slack.counts)}
                body = json.dumps(stats).encode()
            else:
                start = int(parse_qs(url.query).get("since", ["0"])[0])
                body = json.dumps(slack.since(start)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _forget_requests(model: FakeResponses) -> None:
    # The fake keeps every request body for tests to inspect; under load that only grows this process.
    while True:
        time.sleep(2)
        model.requests.clear()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-latency-ms", type=float, default=300.0)
    parser.add_argument("--check-schema", action="store_true", help="validate every body against the OpenAPI spec")
    args = parser.parse_args()
    slack = BenchSlack()
    # The tests check the wire format; here schema validation would only take CPU from the machine measured.
    model = FakeResponses(latency=args.model_latency_ms / 1000, validate=args.check_schema)
    model.respond_with(scripted_turn)
    report = _report_server(slack)
    threading.Thread(target=_forget_requests, args=(model,), daemon=True).start()
    urls = {"slack_api_url": slack.base_url, "slack_token": slack.token, "model_base_url": model.base_url,
            "answers_url": f"http://127.0.0.1:{report.server_address[1]}/answers"}
    print(json.dumps(urls), flush=True)
    sys.stdin.read()  # until the bench closes our stdin (or dies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
