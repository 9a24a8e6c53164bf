"""A fake OpenAI Responses API on 127.0.0.1, for the real `openai.AsyncOpenAI` client.

    with FakeResponses() as fake:                       # or the `fake_model` fixture in tests/agent/conftest.py
        fake.script(tools(search("payment terms")), reply("Net 30 [S1]."))
        client = fake.client()                          # AsyncOpenAI(base_url=fake.base_url, max_retries=0)
        ...
        fake.requests[0].body["tools"]                  # every create request, as sent
        assert fake.problems == []                      # schema violations and unscripted calls
                                                        # leaving the block fails when scripted steps went unused
                                                        # (fake.leave_unused() where that is the point)

`FakeResponses(server="llama.cpp")` answers as llama.cpp's llama-server does (no stored responses: a
`previous_response_id` is HTTP 400, `refused` lists every refusal), `server="azure"` as Azure OpenAI's v1 endpoint
(`endpoint` is AZURE_OPENAI_ENDPOINT): see tests/fakes/model_servers.py.

Like the service, it refuses (when told what it holds): a wrong key (`api_key=...`: 401 invalid_api_key), a model it
does not have (`models={...}`: 400 model_not_found), reasoning effort or the code interpreter on a model without them
(`reasoning=False`, `code_interpreter=False`: 400 unsupported_parameter / unsupported_value).

Scripting: a queue of `Step`s (`script`), or a function `Request -> Step` (`respond_with`) for many concurrent
conversations. The fake stores every response, so `previous_response_id`, GET and DELETE behave like the service:
an unknown, expired (`expire`) or deleted id is HTTP 400 `previous_response_not_found` (404 with
`not_found_status=404`, as some proxies answer), and a follow-up must answer every `call_id` of the response it
continues. Every request body is checked against `CreateResponse` and every response sent against `Response` from
`../shared/specs/openai/openapi.json`; a violation is answered with HTTP 400 and recorded in `problems`.

A request with `stream: true` is answered as the service does: server-sent events over a chunked body
(`response.created`, `response.in_progress`, then per output item `response.output_item.added`, its text deltas or
function call arguments, `response.output_item.done`, and `response.completed` carrying the whole Response). Each
event is checked against its schema in the same document. The model's latency passes before the first item, then
each text token waits `token_delay` (per server or per Step); `first_tokens` records when each response's first
text delta was written, `last_tokens` its last. Unstreamed, a response waits the same time for all its tokens before it is sent (its first
token is recorded when it was written all the same). `reply(text, tokens=[...])` cuts the text where a test needs
it (`[S`, `1]`).
"""

from __future__ import annotations

import itertools
import json
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any

from openai import AsyncOpenAI, DefaultAioHttpClient

from tests.fakes import Loopback
from tests.fakes.model_servers import (
    AZURE_BAD_KEY,
    AZURE_DEPLOYMENT_MISSING,
    azure_error,
    llama_refusal,
    llama_response,
    not_found,
    route,
)
from tests.fakes.openai_spec import problems as schema_problems
from tests.fakes.openai_stream import EventStream, tokens_of

# The fake speaks plain HTTP, so a client's TLS context is never used; each client building its own (the system's CA
# certificates read twice) cost 20 ms of CPU a test.
_TLS = ssl.create_default_context()

Json = dict[str, Any]


@dataclass(frozen=True)
class Call:
    """A function call the fake model makes; `arguments` as a string is sent as it stands (malformed on purpose)."""

    name: str
    arguments: Json | str


@dataclass(frozen=True)
class Code:
    """A code_interpreter run the fake model makes server-side (its logs are returned only when included)."""

    code: str
    logs: str


@dataclass(frozen=True)
class Step:
    """One scripted response: function calls, or a final text (with code runs before it), or an HTTP error."""

    calls: tuple[Call, ...] = ()
    reasoning: str | None = None  # a reasoning model's thought, output as a reasoning item before the rest
    text: str | None = None
    code: tuple[Code, ...] = ()
    status: int | None = None  # an HTTP error status instead of a response
    error_code: str | None = None
    error_message: str | None = None
    error_kind: str = "server_error"  # the error's `type`
    error_param: str | None = None
    incomplete: str | None = None  # a completed call stopped early: incomplete_details.reason ("content_filter")
    latency: float | None = None  # seconds; None = the server's default
    input_tokens: int = 120
    output_tokens: int = 30
    cached_tokens: int = 0  # of input_tokens, reported as usage.input_tokens_details.cached_tokens
    tokens: tuple[str, ...] | None = None  # how a streamed text is cut into deltas (default: word pieces)
    token_delay: float | None = None  # seconds between streamed text deltas; None = the server's default
    broken_after: int | None = None  # streamed: the connection drops after this many text deltas
    # A hostile or broken server: each stream event (or the plain reply) as it goes out; a str is sent as it stands.
    mangle: Callable[[Json], Json | str] | None = None


def call(name: str, **arguments: Any) -> Call:
    return Call(name, arguments)


def raw_call(name: str, arguments: str) -> Call:
    """A call whose arguments string is sent verbatim: invalid JSON, a non-object, nesting too deep to parse."""
    return Call(name, arguments)


def search(query: str) -> Call:
    return Call("search_documents", {"query": query})


def rewrite(query: str) -> Call:
    return Call("rewrite_query", {"query": query})


def tools(*calls: Call, latency: float | None = None, reasoning: str | None = None) -> Step:
    """A response asking for these function calls, in one batch (after a reasoning item, when `reasoning`)."""
    return Step(calls=calls, latency=latency, reasoning=reasoning)


def reply(
    text: str,
    *,
    code: tuple[Code, ...] = (),
    latency: float | None = None,
    tokens: list[str] | None = None,
    token_delay: float | None = None,
) -> Step:
    """A final answer, optionally after code_interpreter runs; `tokens` (joining to `text`) cut its stream."""
    if tokens is not None:
        assert "".join(tokens) == text, "the tokens must join to the text"
    return Step(
        text=text, code=code, latency=latency, tokens=tuple(tokens) if tokens else None, token_delay=token_delay
    )


def broken(text: str, *, after: int, token_delay: float | None = None) -> Step:
    """A streamed answer whose connection drops after `after` text deltas (no final event, no end of the body)."""
    return Step(text=text, broken_after=after, token_delay=token_delay)


def mangled(step: Step, mangle: Callable[[Json], Json | str]) -> Step:
    """`step` as a broken proxy or server sends it: every stream event (or the plain reply) through `mangle`."""
    return replace(step, mangle=mangle)


def stopped(reason: str, text: str = "") -> Step:
    """A response the service ended early with `incomplete_details.reason` (e.g. "content_filter")."""
    return Step(text=text, incomplete=reason)


def error(
    status: int,
    code: str | None = None,
    *,
    latency: float | None = None,
    message: str | None = None,
    kind: str = "server_error",
    param: str | None = None,
) -> Step:
    """An HTTP error response (500, 429, ...), with the service's message, type and param when given."""
    return Step(
        status=status, error_code=code, latency=latency, error_message=message, error_kind=kind, error_param=param
    )


@dataclass
class Request:
    """A create request as the fake received it, with the chain it continues."""

    body: Json
    previous: Json | None = None  # the stored response named by previous_response_id
    depth: int = 0  # how many stored responses precede this one in its chain
    response_id: str | None = None  # the response the fake answered it with (None for an error)

    @property
    def input_items(self) -> list[Json]:
        given = self.body.get("input", [])
        return [{"role": "user", "content": given}] if isinstance(given, str) else list(given)

    @property
    def tool_outputs(self) -> dict[str, str]:
        """call_id -> output of every function_call_output in the input."""
        return {
            item["call_id"]: item["output"] for item in self.input_items if item.get("type") == "function_call_output"
        }

    @property
    def user_text(self) -> str:
        """The text of the last user message in the input ('' when there is none)."""
        for item in reversed(self.input_items):
            if item.get("role") == "user":
                content = item.get("content")
                if isinstance(content, str):
                    return content
                return "".join(part.get("text", "") for part in content or [])
        return ""

    def previous_calls(self) -> list[Json]:
        """The function calls of the response this request continues."""
        output = (self.previous or {}).get("output", [])
        return [item for item in output if item.get("type") == "function_call"]


def shown_sources(output: str) -> list[Json]:
    """The sources of one search_documents output, read as its format defines them (one JSON object each):
    what a scripted model "sees". Notes and failures carry no sources."""
    try:
        shown = json.loads(output)
    except json.JSONDecodeError:
        return []
    return list(shown.get("sources", [])) if isinstance(shown, dict) else []


class FakeResponses:
    """The fake server; use as a context manager or call `close()`."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        not_found_status: int = 400,
        validate: bool = True,
        token_delay: float = 0.0,
        api_key: str | None = None,
        models: set[str] | None = None,
        reasoning: bool = True,
        code_interpreter: bool = True,
        server: str = "openai",
    ) -> None:
        self.latency = latency
        self.token_delay = token_delay
        self.first_tokens: dict[str, float] = {}  # response id -> wall time its first text delta was written
        self.last_tokens: dict[str, float] = {}  # response id -> wall time its last text delta was written
        self.api_key = api_key  # None: any key is accepted
        self.models = models  # None: any model name is accepted
        self.reasoning = reasoning
        self.code_interpreter = code_interpreter
        self.not_found_status = not_found_status
        # "openai"; "llama.cpp": llama-server's /v1/responses (no stored responses, its refusals and reply shape);
        # "azure": Azure OpenAI's v1 endpoint (/openai/v1/responses, `api-key`, deployments). See model_servers.py.
        self.server = server
        self.validate = validate  # benchmarks may skip schema checks to measure Folio rather than jsonschema
        self.web_page = False  # True: answer every request as a web server would (200, HTML): a wrong base URL
        self.requests: list[Request] = []
        self.problems: list[str] = []
        self.deleted: list[str] = []
        self.refused: list[str] = []  # llama.cpp mode: the message of every request it refused, in order
        self.failing_deletes: set[str] = set()  # ids whose DELETE answers HTTP 500 (a half-finished deletion)
        self._steps: deque[Step] = deque()
        self._handler: Callable[[Request], Step] | None = None
        self._stored: dict[str, Json] = {}
        self._chain: dict[str, int] = {}
        self._reasoning_of: dict[str, str] = {}  # output item id -> the reasoning item it follows (OpenAI's rule)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._loopback = Loopback(_handler_for(self), name="fake-responses").start()

    @property
    def endpoint(self) -> str:
        """The server's root URL (Azure: what AZURE_OPENAI_ENDPOINT names)."""
        return self._loopback.url

    @property
    def base_url(self) -> str:
        return f"{self.endpoint}/openai/v1" if self.server == "azure" else f"{self.endpoint}/v1"

    def client(self, **options: Any) -> AsyncOpenAI:
        """A real AsyncOpenAI pointed at the fake (no SDK retries unless asked), on the aiohttp transport Folio
        ships with (bot.app.builders.model_client)."""
        options.setdefault("max_retries", 0)
        options.setdefault("http_client", DefaultAioHttpClient(verify=_TLS))
        options.setdefault("timeout", 10.0)
        options.setdefault("api_key", self.api_key or "sk-fake")
        return AsyncOpenAI(base_url=self.base_url, **options)

    def script(self, *steps: Step) -> None:
        """Queue responses, answered in order by the next create requests."""
        with self._lock:
            self._steps.extend(steps)

    def respond_with(self, handler: Callable[[Request], Step]) -> None:
        """Answer every create request (once the queue is empty) with `handler(request)`."""
        self._handler = handler

    @property
    def pending(self) -> int:
        """Scripted steps not used yet."""
        return len(self._steps)

    def stored_ids(self) -> list[str]:
        with self._lock:
            return list(self._stored)

    def expire(self, *response_ids: str) -> None:
        """Forget responses as the service does after its retention period (all of them when none are named)."""
        with self._lock:
            for response_id in response_ids or list(self._stored):
                self._stored.pop(response_id, None)

    def close(self) -> None:
        self._loopback.stop()

    def __enter__(self) -> FakeResponses:
        return self

    def leave_unused(self) -> None:
        """Say that the scripted steps not used yet are meant to stay unused (a turn cancelled or failed on purpose)."""
        with self._lock:
            self._steps.clear()

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self.close()
        if exc_type is None and self._steps:  # a step the test wrote for a request that never came
            raise AssertionError(f"{len(self._steps)} scripted steps left unused: {self._steps!r:.300}")

    # --- request handling (server threads) -----------------------------------------------------------------------
    def create(self, body: Json) -> tuple[int, Json | EventStream]:
        if self.server == "llama.cpp":  # it refuses before anything else; Folio's requests must still be valid
            refused = llama_refusal(body)
            if refused is not None:
                with self._lock:
                    self.refused.append(refused[1]["error"]["message"])
                return refused
        found = schema_problems(body, "CreateResponse") if self.validate else []
        if found:
            self._record_problems(found)
            return _error(400, "; ".join(found), code="invalid_request_body")
        refused = self._refusal(body) or self._missing_reasoning(body)
        if refused is not None:
            return refused
        previous_id = body.get("previous_response_id")
        with self._lock:
            previous = self._stored.get(previous_id) if previous_id else None
            depth = self._chain.get(previous_id, 0) + 1 if previous else 0
        if previous_id and previous is None:
            return _error(
                self.not_found_status,
                f"Previous response with id '{previous_id}' not found.",
                code="previous_response_not_found",
                param="previous_response_id",
            )
        request = Request(body=body, previous=previous, depth=depth)
        with self._lock:
            self.requests.append(request)
        missing = [c["call_id"] for c in request.previous_calls() if c["call_id"] not in request.tool_outputs]
        if missing:
            return _error(400, f"No tool output found for function call {missing[0]}.", param="input")
        step = self._next_step(request)
        if step.calls and body.get("tool_choice") == "none":  # the service never calls tools then
            number = len(self.requests)
            self._record_problems([f"script makes tool calls although tool_choice is 'none' (request #{number})"])
        latency = self.latency if step.latency is None else step.latency
        delay = self.token_delay if step.token_delay is None else step.token_delay
        if body.get("stream") and step.status is None:  # the service starts the stream before the model writes
            response = self._respond(body, step, depth)
            request.response_id = response["id"]
            checked = self.validate and self.server != "llama.cpp"  # llama-server's events are not the schema's
            stream = EventStream(
                response,
                tokens=step.tokens,
                latency=latency,
                token_delay=delay,
                check=self._record_problems if checked else None,
            )
            stream.broken_after = step.broken_after
            stream.mangle = step.mangle
            return 200, stream
        time.sleep(latency)
        if step.status is not None:
            message = step.error_message or f"fake error {step.status}"
            if self.server == "llama.cpp":  # its shape: the status as `code`, no param
                return step.status, {"error": {"code": step.status, "message": message, "type": step.error_kind}}
            return _error(step.status, message, code=step.error_code, kind=step.error_kind, param=step.error_param)
        response = self._respond(body, step, depth)
        request.response_id = response["id"]
        if step.mangle is not None:
            return 200, step.mangle(response)  # type: ignore[return-value]
        if step.text and delay:  # unstreamed, the whole text is written before the response is sent
            self.first_token(response["id"])
            time.sleep(delay * (len(tokens_of(step.text, step.tokens)) - 1))
            self.last_token(response["id"])
        return 200, response

    def refuses_key(self, authorization: str | None, api_key: str | None = None) -> tuple[int, Json] | None:
        """401 as the service answers a wrong or missing key (its message shows only the key's ends); Azure takes
        the key as `api-key` too."""
        if self.api_key is None or authorization == f"Bearer {self.api_key}":
            return None
        if self.server == "azure":
            return None if api_key == self.api_key else azure_error(401, "401", AZURE_BAD_KEY)
        given = (authorization or "").removeprefix("Bearer ")
        shown = f"{given[:3]}{'*' * 8}{given[-2:]}" if len(given) > 6 else "(none)"
        message = f"Incorrect API key provided: {shown}. You can find your API key at https://platform.openai.com/."
        return _error(401, message, code="invalid_api_key")

    def _refusal(self, body: Json) -> tuple[int, Json] | None:
        """What the service refuses before running anything: an unknown model, parameters the model does not take."""
        model = body.get("model")
        if self.models is not None and self.server != "azure" and model not in self.models:
            return _error(400, f"The requested model '{model}' does not exist.", code="model_not_found", param="model")
        if self.models is not None and self.server == "azure" and model not in self.models:
            return azure_error(404, "DeploymentNotFound", AZURE_DEPLOYMENT_MISSING)
        if not self.reasoning and (body.get("reasoning") or {}).get("effort"):
            message = "Unsupported parameter: 'reasoning.effort' is not supported with this model."
            return _error(400, message, code="unsupported_parameter", param="reasoning.effort")
        if not self.code_interpreter and any(
            tool.get("type") == "code_interpreter" for tool in body.get("tools") or []
        ):
            message = "Tool 'code_interpreter' is not supported with this model."
            return _error(400, message, code="unsupported_value", param="tools")
        return None

    def _missing_reasoning(self, body: Json) -> tuple[int, Json] | None:
        """OpenAI refuses an output item resent without the reasoning item that preceded it (stateless callers must
        resend reasoning items too)."""
        given = body.get("input")
        seen: set[str] = set()
        for item in given if isinstance(given, list) else []:
            needed = self._reasoning_of.get(item.get("id") or "")
            if needed and needed not in seen:
                message = (
                    f"Item '{item['id']}' of type '{item.get('type')}' was provided without its required "
                    f"'reasoning' item: '{needed}'."
                )
                return _error(400, message, param="input")
            seen.add(item.get("id") or "")
        return None

    def retrieve(self, response_id: str) -> tuple[int, Json]:
        if self.server == "llama.cpp":  # no route: it keeps nothing
            return not_found(self.server, f"/v1/responses/{response_id}")
        with self._lock:
            stored = self._stored.get(response_id)
        if stored is None:
            return _error(404, f"Response with id '{response_id}' not found.", code="not_found")
        return 200, stored

    def delete(self, response_id: str) -> tuple[int, Json]:
        if self.server == "llama.cpp":
            return not_found(self.server, f"/v1/responses/{response_id}")
        if response_id in self.failing_deletes:
            return _error(500, "fake delete failure", kind="server_error")
        with self._lock:
            stored = self._stored.pop(response_id, None)
            if stored is not None:
                self.deleted.append(response_id)
        if stored is None:
            return _error(404, f"Response with id '{response_id}' not found.", code="not_found")
        return 200, {"id": response_id, "object": "response", "deleted": True}

    def _next_step(self, request: Request) -> Step:
        with self._lock:
            if self._steps:
                return self._steps.popleft()
        if self._handler is not None:
            return self._handler(request)
        self._record_problems([f"unscripted request #{len(self.requests)}: {request.user_text[:80]!r}"])
        return error(500, "fake_unscripted")

    def _respond(self, body: Json, step: Step, depth: int) -> Json:
        number = next(self._ids)
        include_logs = "code_interpreter_call.outputs" in (body.get("include") or [])
        output = [_code_item(number, i, run, include_logs) for i, run in enumerate(step.code)]
        output += [_call_item(number, i, c) for i, c in enumerate(step.calls)]
        if step.text is not None:
            output.append(_message_item(number, step.text))
        if step.reasoning is not None:
            thought = _reasoning_item(number, step.reasoning)
            with self._lock:
                self._reasoning_of.update({item["id"]: thought["id"] for item in output})
            output.insert(0, thought)
        response = _response(f"resp_{number:06d}", body, output, step)
        if self.server == "llama.cpp":  # its own shape (not the Response schema), and nothing kept
            return llama_response(response)
        found = schema_problems(response, "Response") if self.validate else []
        if found:  # a bug in the fake itself: make the test fail loudly
            self._record_problems(found)
        if body.get("store", True):  # store=false: the service keeps nothing to chain from, retrieve or delete
            with self._lock:
                self._stored[response["id"]] = response
                self._chain[response["id"]] = depth
        return response

    def _record_problems(self, found: list[str]) -> None:
        with self._lock:
            self.problems.extend(found)

    def first_token(self, response_id: str) -> None:
        """Record that a response's first text delta was written now (the first one counts)."""
        with self._lock:
            self.first_tokens.setdefault(response_id, time.time())

    def last_token(self, response_id: str) -> None:
        """Record that a text delta of a response was written now (the last one counts)."""
        with self._lock:
            self.last_tokens[response_id] = time.time()


def _response(response_id: str, body: Json, output: list[Json], step: Step) -> Json:
    now = int(time.time())
    return {
        "id": response_id,
        "object": "response",
        "created_at": now,
        "completed_at": now,
        "status": "incomplete" if step.incomplete else "completed",
        "error": None,
        "incomplete_details": {"reason": step.incomplete} if step.incomplete else None,
        "instructions": body.get("instructions"),
        "model": body["model"],
        "tools": body.get("tools", []),
        "tool_choice": body.get("tool_choice", "auto"),
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None},
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "store": body.get("store", True),
        "output": output,
        "usage": {
            "input_tokens": step.input_tokens,
            "input_tokens_details": {"cached_tokens": step.cached_tokens, "cache_write_tokens": 0},
            "output_tokens": step.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": step.input_tokens + step.output_tokens,
        },
    }


def _call_item(number: int, index: int, tool_call: Call) -> Json:
    return {
        "type": "function_call",
        "id": f"fc_{number:06d}_{index}",
        "call_id": f"call_{number:06d}_{index}",
        "name": tool_call.name,
        "arguments": tool_call.arguments if isinstance(tool_call.arguments, str) else json.dumps(tool_call.arguments),
        "status": "completed",
    }


def _code_item(number: int, index: int, run: Code, include_logs: bool) -> Json:
    return {
        "type": "code_interpreter_call",
        "id": f"ci_{number:06d}_{index}",
        "status": "completed",
        "container_id": f"cntr_{number:06d}",
        "code": run.code,
        "outputs": [{"type": "logs", "logs": run.logs}] if include_logs else None,
    }


def _reasoning_item(number: int, text: str) -> Json:
    return {
        "type": "reasoning",
        "id": f"rs_{number:06d}",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": text}],
        "encrypted_content": f"gAAAAB-fake-{number}",
        "status": "completed",
    }


def _message_item(number: int, text: str) -> Json:
    return {
        "type": "message",
        "id": f"msg_{number:06d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def _error(
    status: int, message: str, *, code: str | None = None, param: str | None = None, kind: str = "invalid_request_error"
) -> tuple[int, Json]:
    return status, {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _handler_for(fake: FakeResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
        disable_nagle_algorithm = True  # headers and body go out in two writes: without this, ~40 ms per call

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            if fake.web_page:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                page = b"<html><body>It works!</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return
            if self._refused():
                return
            if self._route() != ("responses", None):
                self._send(*not_found(fake.server, self.path))
                return
            length = int(self.headers.get("Content-Length", 0))
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError as exc:
                self._send(*_error(400, f"invalid JSON: {exc}"))
                return
            status, answer = fake.create(body)
            if isinstance(answer, EventStream):
                self._stream(answer)
            else:
                self._send(status, answer)

        def do_GET(self) -> None:  # noqa: N802
            if self._refused():
                return
            kind, response_id = self._route()
            found = kind == "responses" and response_id
            self._send(*(fake.retrieve(response_id) if found else not_found(fake.server, self.path)))

        def do_DELETE(self) -> None:  # noqa: N802
            if self._refused():
                return
            kind, response_id = self._route()
            found = kind == "responses" and response_id
            self._send(*(fake.delete(response_id) if found else not_found(fake.server, self.path)))

        def _refused(self) -> bool:
            refusal = fake.refuses_key(self.headers.get("Authorization"), self.headers.get("api-key"))
            if refusal is None:
                return False
            self.rfile.read(int(self.headers.get("Content-Length", 0)))  # keep the connection usable
            self._send(*refusal)
            return True

        def _route(self) -> tuple[str | None, str | None]:
            return route(fake.server, self.path)

        def _send(self, status: int, payload: Json | str) -> None:
            data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
            self.send_response(status, HTTPStatus(status).phrase)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, stream: EventStream) -> None:
            """Server-sent events in a chunked body, each written (and flushed) when its time comes."""
            self.send_response(200, "OK")
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event, delay in stream.events():
                if delay:
                    time.sleep(delay)
                sent = stream.mangle(event) if stream.mangle else event
                payload = sent if isinstance(sent, str) else json.dumps(sent)
                data = f"event: {event['type']}\ndata: {payload}\n\n".encode()
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
                if event["type"] == "response.output_text.delta":
                    fake.first_token(stream.response["id"])
                    fake.last_token(stream.response["id"])
            if stream.broken_after is not None:  # the connection drops: no last chunk, the body never ends
                self.close_connection = True
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def log_message(self, *args: object) -> None:  # quiet: pytest shows failures, not access logs
            pass

    return Handler
