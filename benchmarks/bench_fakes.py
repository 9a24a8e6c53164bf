"""The fakes `folio bench` runs Folio against, in their own process so the bench measures Folio, not them.

    python benchmarks/bench_fakes.py --model-latency-ms 300    # from the checkout root, with it on PYTHONPATH

Starts the fake Slack Web API and the fake Responses API (tests/fakes/) and prints one JSON line with their URLs.
The fake model plays a fixed turn: rewrite_query, then two search_documents calls in one batch, then an answer of
about 600 characters citing the passages it was shown; each call waits the given latency, and each token of the
answer `--token-delay-ms`. A side server reports, for the bench driver, every answer message Folio posts, updates
or streams (`GET /answers?since=N`, with when the turn's first step, first search and first answer text became
visible and when the model wrote its first token) and how many calls Folio made (`GET /stats`); `POST
/model?latency_ms=N&fail=1` makes the model slow or answer HTTP 500 until the next such call (benchmarks/chaos.py).
The process stops when stdin closes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from bot import messages
from tests.fakes.openai_responses import FakeResponses, Request, Step, error, reply, rewrite, search, tools
from tests.fakes.openai_stream import tokens_of
from tests.fakes.slack_api import FakeSlack, Message

# Sentences Folio shows when a turn fails: the driver counts them as errors. Looked up by name, so a sentence
# renamed or removed in bot/messages.py drops out here instead of breaking the bench.
_FAILURE_NAMES = (
    "SEARCH_DOWN",
    "STORE_DOWN",
    "UNEXPECTED",
    "MODEL_UNAVAILABLE",
    "MODEL_DOWN",
    "TURN_TIMED_OUT",
    "SLACK_FAILED",
    "NOT_SAVED",
    "NOT_IN_DOCUMENTS",
    "SCOPE_CHANGED",
    "CONVERSATION_GONE",
)
FAILURES = tuple(text for name in _FAILURE_NAMES if isinstance(text := getattr(messages, name, None), str))
ANSWER_MARK = "Bench answer"  # in every final answer of the fake model, so the driver can tell answers apart
_REF = re.compile(r"\bS\d+\b")
_NUMBER = re.compile(re.escape(ANSWER_MARK) + r" (\d+)")
_ANSWERS = itertools.count(1)
FIRST_TOKENS: dict[int, float] = {}  # answer number -> when the model wrote its first token
TOKEN_DELAY = [0.0]  # seconds per answer token, as --token-delay-ms set it
GENERATION = [0.0]  # seconds the answers' tokens took to write, all answers together
BODY = (
    "the plan documents cover this question in some detail, and the passages below are the ones that decide it. "
    "The first passage sets out the rule and the cases it covers, including the amounts and the dates that apply "
    "{a}. The second passage adds the exceptions, what a member must do to claim them, and who to contact when a "
    "bill looks wrong {b}. Taken together they answer the question as asked; where they differ, the later "
    "document applies, and the answer follows it {a}{b}."
)


MODEL_CALLS = itertools.count(1)  # create requests answered (next() is atomic under the GIL)
_model_calls = 0
MODEL_FAULT: dict[str, float | None] = {"latency": None, "fail": 0}  # set by POST /model (chaos.py's faults)


def scripted_turn(request: Request) -> Step:
    """rewrite -> two searches -> an answer citing up to two of the passages shown."""
    global _model_calls
    _model_calls = next(MODEL_CALLS)
    if MODEL_FAULT["fail"]:
        return error(500, message="The server had an error while processing your request.")
    step = _scripted(request)
    return step if MODEL_FAULT["latency"] is None else replace(step, latency=MODEL_FAULT["latency"])


def _scripted(request: Request) -> Step:
    previous = {call["name"] for call in request.previous_calls()}
    if not request.tool_outputs:
        return tools(rewrite(request.user_text or "benefits"))
    if "rewrite_query" in previous:
        asked = next(iter(request.tool_outputs.values()))
        return tools(search(asked), search(f"{asked} costs and limits"))
    refs = list(dict.fromkeys(_REF.findall(" ".join(request.tool_outputs.values())))) or ["S1"]
    first, second = f"[{refs[0]}]", f"[{refs[min(1, len(refs) - 1)]}]"
    text = f"{ANSWER_MARK} {next(_ANSWERS)}: " + BODY.format(a=first, b=second)
    GENERATION[0] += TOKEN_DELAY[0] * (len(tokens_of(text)) - 1)
    return reply(text)


class BenchModel(FakeResponses):
    """The fake model, noting when it wrote the first token of each numbered answer."""

    def first_token(self, response_id: str) -> None:
        super().first_token(response_id)
        with self._lock:
            text = json.dumps(self._stored.get(response_id, {}).get("output", []))
        if found := _NUMBER.search(text):
            FIRST_TOKENS.setdefault(int(found.group(1)), time.time())


class BenchSlack(FakeSlack):
    """The fake Slack, recording when each answer appears (wall clock, comparable across processes) and, per turn,
    when its first step (a status, placeholder or task card), first search and first answer text became visible."""

    def __init__(self) -> None:
        super().__init__(token="xoxb-bench")
        self.answers: list[dict[str, Any]] = []
        self._answered: set[tuple[str, str]] = set()
        self._turns: dict[str, dict[str, float]] = {}  # thread -> first_step / first_search / first_text
        self.counts: dict[str, int] = {}
        self.stream_text = {"appends": 0, "text_appends": 0, "chars": 0}

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

    def _assistant_threads_setStatus(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("status"):
            self._progress(params["thread_ts"], params["status"])
        return super()._assistant_threads_setStatus(params)

    def _chat_appendStream(self, params: dict[str, Any]) -> dict[str, Any]:
        chunks = params.get("chunks") or []
        self.stream_text["appends"] += 1
        self.stream_text["text_appends"] += bool(chunks) and all(c.get("type") == "markdown_text" for c in chunks)
        self._count_text(chunks)
        return super()._chat_appendStream(params)

    def _chat_stopStream(self, params: dict[str, Any]) -> dict[str, Any]:
        self._count_text(params.get("chunks") or [])
        return super()._chat_stopStream(params)

    def _count_text(self, chunks: list[dict[str, Any]]) -> None:
        self.stream_text["chars"] += sum(len(c.get("text", "")) for c in chunks if c.get("type") == "markdown_text")

    def _saw(self, message: Message, *, deleted: bool = False) -> None:
        super()._saw(message, deleted=deleted)
        if message.stream is None or message.thread_ts is None:
            return
        for task in message.stream.tasks.values():
            self._progress(message.thread_ts, task["title"])
        if message.stream.markdown:
            self._turns.setdefault(message.thread_ts, {}).setdefault("first_text", time.time())
        if not message.stream.streaming:  # a finished stream: an answer, or a failure (quoted passages included)
            self._note(
                {"channel": message.channel, "text": message.stream.markdown, "blocks": message.blocks},
                message.ts,
                message.thread_ts,
            )

    def _progress(self, thread_ts: str, title: str) -> None:
        # Called under the fake's lock: the first progress of a turn, and its first search, as they become visible.
        turn = self._turns.setdefault(thread_ts, {})
        turn.setdefault("first_step", time.time())
        if "Searching" in title:
            turn.setdefault("first_search", time.time())

    def _note(self, params: dict[str, Any], ts: str, thread_ts: str | None) -> None:
        # Called under the fake's lock. A message counts once, however often it is updated.
        shown = str(params.get("text", "")) + json.dumps(params.get("blocks") or [])
        key, thread = (params["channel"], ts), thread_ts or ts
        answer = ANSWER_MARK in shown
        if not (answer or any(failure in shown for failure in FAILURES)):
            self._progress(thread, shown)  # a placeholder: "Reading your question…", "Searching: …"
            return
        if key in self._answered:
            return
        self._answered.add(key)
        now = time.time()
        turn = self._turns.pop(thread, {})
        number = _NUMBER.search(shown)
        self.answers.append(
            {
                "channel": params["channel"],
                "thread_ts": thread,
                "ts": ts,
                "answer": answer,
                "text": str(params.get("text", ""))[:200],
                "at": now,
                "first_step": turn.get("first_step"),
                "first_search": turn.get("first_search"),
                "first_text": turn.get("first_text", now),
                "first_token": FIRST_TOKENS.get(int(number.group(1))) if number else None,
            }
        )

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
                    stats = {
                        "model_calls": _model_calls,
                        "slack_calls": dict(slack.counts),
                        "stream_text": dict(slack.stream_text),
                        "generation_s": GENERATION[0],
                    }
                body = json.dumps(stats).encode()
            else:
                start = int(parse_qs(url.query).get("since", ["0"])[0])
                body = json.dumps(slack.since(start)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802 - POST /model: a model fault, until the next one
            query = parse_qs(urlparse(self.path).query)
            latency = query.get("latency_ms", [""])[0]
            MODEL_FAULT["latency"] = float(latency) / 1000 if latency else None
            MODEL_FAULT["fail"] = float(query.get("fail", ["0"])[0])
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

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
    parser.add_argument("--token-delay-ms", type=float, default=0.0, help="per token of the answer")
    parser.add_argument("--check-schema", action="store_true", help="validate every body against the OpenAPI spec")
    args = parser.parse_args()
    slack = BenchSlack()
    # The tests check the wire format; here schema validation would only take CPU from the machine measured.
    TOKEN_DELAY[0] = args.token_delay_ms / 1000
    model = BenchModel(
        latency=args.model_latency_ms / 1000, validate=args.check_schema, token_delay=args.token_delay_ms / 1000
    )
    model.respond_with(scripted_turn)
    report = _report_server(slack)
    threading.Thread(target=_forget_requests, args=(model,), daemon=True).start()
    urls = {
        "slack_api_url": slack.base_url,
        "slack_token": slack.token,
        "model_base_url": model.base_url,
        "answers_url": f"http://127.0.0.1:{report.server_address[1]}/answers",
    }
    print(json.dumps(urls), flush=True)
    sys.stdin.read()  # until the bench closes our stdin (or dies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
