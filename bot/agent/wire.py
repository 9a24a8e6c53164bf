"""The Responses API on the wire: one plain `post` a call, its reply read into a small typed value.

    reply = await create(model, request_body(params))     # non-streamed
    reply.id, reply.output_text, reply.function_calls, reply.code_runs, reply.input_tokens

`AsyncOpenAI.responses.create` spends about 1.2 ms of CPU a call besides the network: it transforms the parameters
against their TypedDicts (about 0.7 ms for Folio's tools and input, every call) and builds the typed `Response` from
the reply (about 0.4 ms). `post("/responses", body=..., cast_to=object)` is the SDK's documented way to make a
request its typed methods do not shape: the same client, auth, retries, timeouts and errors (`openai.APIStatusError`
and its kin, which `provider_errors.model_call` translates), without those two steps. The body goes as JSON bytes
(`content=`: the SDK sends them as they are) and the reply comes back as the decoded JSON, read here into `ModelReply`: only
what the loop uses, checked as it is read (a reply without an id is the service's fault, not a KeyError later).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.agent.calls import FunctionCall
from bot.agent.state import resendable
from bot.errors import ModelUnavailable

if TYPE_CHECKING:  # the SDK loads with the first model call: `folio ask` without a model never needs it
    from openai import AsyncOpenAI

Json = Mapping[str, Any]


class NotAResponse(ModelUnavailable):
    """The reply is not the Responses API's (a web page, another service's JSON): the base URL names something else.
    `provider_errors.model_call` makes it the configuration error it is."""


class MalformedReply(ModelUnavailable):
    """A reply or stream event broken on the way (a field missing, a line that is not JSON, a count that is not a
    number): the turn answers search-only, as when the service is down, and the log names what was wrong."""

    def __init__(self, what: str) -> None:
        super().__init__(f"The model service sent a malformed reply: {what}.")


@dataclass(frozen=True)
class CodeRun:
    """One code_interpreter run the service executed: its code and what it printed."""

    id: str
    code: str
    logs: str

    @classmethod
    def read(cls, item: Json) -> CodeRun:
        outputs = item.get("outputs") or []
        logs = "\n".join(str(out.get("logs") or "") for out in outputs if isinstance(out, Mapping))
        return cls(id=str(item.get("id") or ""), code=str(item.get("code") or ""), logs=logs)


@dataclass(frozen=True)
class ModelReply:
    """What the tool loop reads of one response."""

    id: str
    status: str | None
    output_text: str  # every output_text part of every message, joined (as the SDK's Response.output_text)
    function_calls: tuple[FunctionCall, ...]
    code_runs: tuple[CodeRun, ...]
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # of input_tokens, those the provider served from its prompt cache (billed lower)
    has_usage: bool = False
    error: str | None = None  # the service's message when status is "failed"
    incomplete_reason: str | None = None  # "content_filter", "max_output_tokens", ...
    items: tuple[Json, ...] = ()  # its messages and function calls as sent, for a service that keeps none

    @classmethod
    def read(cls, data: object) -> ModelReply:
        """The reply from a response object as the service sent it; ModelUnavailable when it is not one."""
        if not isinstance(data, Mapping) or not isinstance(data.get("id"), str):
            raise NotAResponse(f"The model service answered with something that is not a response: {_glimpse(data)}")
        output = [item for item in data.get("output") or () if isinstance(item, Mapping)]
        usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else None
        error = data.get("error") if isinstance(data.get("error"), Mapping) else None
        incomplete = data.get("incomplete_details") if isinstance(data.get("incomplete_details"), Mapping) else None
        return cls(
            id=data["id"],
            status=data.get("status"),
            output_text=_text_of(output),
            function_calls=tuple(
                FunctionCall(
                    call_id=str(item.get("call_id")),
                    name=str(item.get("name")),
                    arguments=str(item.get("arguments") or ""),
                )
                for item in output
                if item.get("type") == "function_call"
            ),
            code_runs=tuple(CodeRun.read(item) for item in output if item.get("type") == "code_interpreter_call"),
            input_tokens=_count(usage, "input_tokens"),
            output_tokens=_count(usage, "output_tokens"),
            cached_tokens=min(_cached(usage), _count(usage, "input_tokens")),  # part of the input, never more
            has_usage=usage is not None,
            error=str(error.get("message") or "no detail") if error else None,
            incomplete_reason=incomplete.get("reason") if incomplete else None,
            items=resendable(output),
        )


# No model's context and output come near this: a count beyond it is a broken server's, and must not reach the usage
# counters (one reply reporting ~2**63 would overflow the day's Redis counter for everyone).
MAX_CALL_TOKENS = 100_000_000


def _count(usage: Json | None, key: str) -> int:
    """A token count of `usage`: 0 when absent; MalformedReply when it is not a whole number of tokens one call can
    have (negative, fractional, or past MAX_CALL_TOKENS)."""
    value = usage.get(key) if usage else None
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CALL_TOKENS:
        raise MalformedReply(f"usage.{key} is {_glimpse(value)!r}, not a number of tokens one call can use")
    return value


def _cached(usage: Json | None) -> int:
    """The cached part of the input tokens (`input_tokens_details.cached_tokens`), checked like any token count."""
    details = usage.get("input_tokens_details") if usage else None
    return _count(details, "cached_tokens") if isinstance(details, dict) else 0


def _glimpse(data: object) -> str:
    """The start of a reply that is not a response, for the log (a web page's first characters say what it is)."""
    return " ".join(str(data).split())[:80]


def _text_of(output: list[Json]) -> str:
    return "".join(
        str(part.get("text") or "")
        for item in output
        if item.get("type") == "message"
        for part in item.get("content") or ()
        if isinstance(part, Mapping) and part.get("type") == "output_text"
    )


def request_body(params: Json) -> bytes:
    """The request as the JSON the SDK would send (UTF-8, compact)."""
    return json.dumps(params, ensure_ascii=False, separators=(",", ":")).encode()


async def create(model: AsyncOpenAI, body: bytes) -> ModelReply:
    """`POST /responses` (not streamed) through the SDK's client."""
    return ModelReply.read(await model.post("/responses", cast_to=object, content=body))
