"""The model service's errors, translated at the boundary into Folio errors that name their cause.

    function tools refused (--jinja)       ModelMisconfigured: the server, which Folio's tools need (any status)
    401 / 403                              ModelMisconfigured: the key (or, on Azure without one, Entra ID's role)
    model or deployment not found          ModelMisconfigured: FOLIO_MODEL_FAST / FOLIO_MODEL_THOROUGH
    reasoning or code interpreter refused  ModelMisconfigured: FOLIO_REASONING / FOLIO_CODE_INTERPRETER
    429 insufficient_quota                 QuotaExceeded
    429 rate limit (after the SDK's retries)   RateLimited: Folio asks faster than the account allows
    a content filter (HTTP 400, or a response it stopped)   ContentFiltered
    context_length_exceeded                ContextTooLong (the loop trims the oldest history and retries once)
    previous_response_not_found            HistoryExpired
    previous_response_id not supported     KeepsNoResponses: a server that keeps none (llama.cpp), see agent.state
    timeouts (and 408), connection errors, 5xx, 409
                                           ModelUnavailable: the only ones answered with quoted passages instead
    any other 4xx                          ModelRefused

`model_call(...)` wraps one call: it times it (the turn reports a `ModelCalled` event) and raises the translated error. What an admin must fix
(misconfiguration, quota) is logged with the setting to change, once a minute at most rather than once a turn.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot import messages
from bot.agent.wire import ModelReply, NotAResponse
from bot.errors import (
    ContentFiltered,
    ContextTooLong,
    FolioError,
    HistoryExpired,
    KeepsNoResponses,
    ModelMisconfigured,
    ModelRefused,
    ModelUnavailable,
    QuotaExceeded,
    RateLimited,
)

if TYPE_CHECKING:  # the SDK loads with the first model call: `folio ask` without a model never needs it
    import openai
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

LOG_EVERY = 60.0  # seconds between two log lines about the same misconfiguration
_MODEL_MISSING = {"model_not_found", "DeploymentNotFound"}
_FILTERED = {"content_filter", "content_policy_violation", "invalid_prompt"}


@dataclass(frozen=True)
class Failure:
    """What the service answered, in the terms `classify` decides on."""

    status: int | None  # None: no HTTP answer (timeout, connection error)
    code: str = ""
    param: str = ""
    kind: str = ""  # the error's `type`
    message: str = ""


@dataclass(frozen=True)
class Call:
    """What was asked: which model for which profile, from which service, chained to a stored response or not."""

    model: str
    profile: str
    azure: bool = False
    chained: bool = False


def classify(failure: Failure, call: Call) -> FolioError:
    """The Folio error for a failed call (pure: the same answer always gives the same error)."""
    for rule in (
        _no_tools,
        _passing,
        _keeps_none,
        _history_gone,
        _setting_refused,
        _quota,
        _rate_limited,
        _filtered,
        _too_long,
    ):
        error = rule(failure, call)
        if error is not None:
            return error
    return ModelRefused(
        messages.MODEL_REFUSED, detail=f"the service refused a request ({_said(failure)}): {failure.message}"
    )


def _no_tools(failure: Failure, call: Call) -> FolioError | None:
    """A server that refuses function tools, which Folio cannot drop: llama-server started without --jinja answers
    HTTP 500 "tools param requires --jinja flag" (not an outage: it never passes); Ollama "does not support tools"."""
    text = failure.message.lower()
    if "--jinja" not in text and "does not support tools" not in text:
        return None
    url = "AZURE_OPENAI_ENDPOINT" if call.azure else "OPENAI_BASE_URL"
    return _misconfigured(
        url,
        f"the server refuses function tools ({_said(failure)}): {failure.message}",
        "start llama-server with --jinja (Folio's search is a function tool), or use a model that calls tools",
    )


def _passing(failure: Failure, call: Call) -> FolioError | None:
    """An outage that may pass, still failing after the SDK's retries: no answer, a timeout, a conflict, a 5xx."""
    status = failure.status
    if status is None or status >= 500 or status in (408, 409):
        what = f"HTTP {status}" if status else "no answer"
        return ModelUnavailable(f"The model service could not answer ({what}): {failure.message}")
    return None


def _keeps_none(failure: Failure, call: Call) -> FolioError | None:
    """A 400 saying previous_response_id is not supported (llama.cpp: "llama.cpp does not support
    'previous_response_id'."), not that the one named is unknown (that is `_history_gone`)."""
    text = f"{failure.param} {failure.message}".lower()
    if failure.status != 400 or failure.code == "previous_response_not_found" or "previous_response_id" not in text:
        return None
    if "support" not in text:  # "does not support", "not supported", "unsupported"
        return None
    return KeepsNoResponses(
        messages.MODEL_MISCONFIGURED,
        setting="FOLIO_MODEL_STATE",
        detail=f"the service keeps no responses: it refused previous_response_id ({_said(failure)}): {failure.message}",
        fix="set FOLIO_MODEL_STATE=client (or auto) so that Folio resends each conversation",
    )


def _history_gone(failure: Failure, call: Call) -> FolioError | None:
    # Some proxies answer 404 instead of 400 previous_response_not_found.
    gone = failure.code == "previous_response_not_found"
    if gone or (call.chained and failure.status == 404 and not _model_missing(failure)):
        return HistoryExpired(messages.HISTORY_EXPIRED)
    return None


def _setting_refused(failure: Failure, call: Call) -> FolioError | None:
    """A key, model or switch the service does not accept: the setting to change, and how."""
    if _model_missing(failure) or failure.status == 404:
        setting = "FOLIO_MODEL_THOROUGH" if call.profile == "thorough" else "FOLIO_MODEL_FAST"
        url = "AZURE_OPENAI_ENDPOINT" if call.azure else "OPENAI_BASE_URL"
        fix = f"set {setting} to a model or deployment it has (or check {url})"
        return _misconfigured(setting, f"{call.model!r} was not found ({_said(failure)})", fix)
    if failure.status in (401, 403):
        setting = "AZURE_OPENAI_API_KEY" if call.azure else "OPENAI_API_KEY"
        fix = f"set {setting} to a valid key"
        if call.azure:
            fix += " (without a key, give Folio's Entra ID identity the Cognitive Services OpenAI User role)"
        return _misconfigured(setting, f"the key was refused ({_said(failure)})", fix)
    switch = _switch_refused(failure)
    if switch is not None:
        return _misconfigured(
            switch, f"{call.model!r} does not take what {switch} sends ({_said(failure)})", f"set {switch}=false"
        )
    return None


def not_the_api(exc: NotAResponse, call: Call) -> ModelMisconfigured:
    """A reply that is not the Responses API's: the base URL names a web server or another service."""
    url = "AZURE_OPENAI_ENDPOINT" if call.azure else "OPENAI_BASE_URL"
    example = "https://NAME.openai.azure.com" if call.azure else "https://api.openai.com/v1"
    return _misconfigured(
        url, f"the reply is not a Responses API reply ({exc})", f"set {url} to the API's address, e.g. {example}"
    )


def _model_missing(failure: Failure) -> bool:
    text = failure.message.lower()
    return failure.code in _MODEL_MISSING or ("does not exist" in text and ("model" in text or "deployment" in text))


def _switch_refused(failure: Failure) -> str | None:
    """The switch that turns off what a 400 names: reasoning effort, or the code interpreter tool."""
    if failure.status != 400:
        return None
    where = f"{failure.param} {failure.message}".lower()
    if "reasoning" in where:
        return "FOLIO_REASONING"
    if "code_interpreter" in where or "code interpreter" in where:
        return "FOLIO_CODE_INTERPRETER"
    if "type' of tool must be 'function'" in where:  # llama.cpp's server takes function tools only
        return "FOLIO_CODE_INTERPRETER"
    return None


def _quota(failure: Failure, call: Call) -> FolioError | None:
    if failure.status == 429 and "insufficient_quota" in (failure.code, failure.kind):
        return QuotaExceeded(
            messages.MODEL_QUOTA,
            detail="the account's quota is used up (429 insufficient_quota): "
            "check the plan and billing of the account behind the key",
        )
    return None


def _rate_limited(failure: Failure, call: Call) -> FolioError | None:
    # Not an outage: quoting passages would hide that the account's limits are too low for the load.
    if failure.status == 429:
        return RateLimited(
            messages.MODEL_RATE_LIMITED,
            detail=f"the service is rate-limiting Folio ({_said(failure)}): "
            "raise the account's or deployment's rate limit, or lower the load",
        )
    return None


def _filtered(failure: Failure, call: Call) -> FolioError | None:
    if failure.code in _FILTERED or "content management policy" in failure.message.lower():
        return ContentFiltered(messages.CONTENT_FILTERED, detail=f"content filter ({_said(failure)})")
    return None


def _too_long(failure: Failure, call: Call) -> FolioError | None:
    text = failure.message.lower()
    # llama.cpp's server: type exceed_context_size_error, "request (N tokens) exceeds the available context size".
    llama = failure.kind == "exceed_context_size_error" or "exceeds the available context size" in text
    if (
        failure.code == "context_length_exceeded"
        or "context window" in text
        or "maximum context length" in text
        or llama
    ):
        return ContextTooLong(messages.CONTEXT_TOO_LONG, detail=f"context too long ({_said(failure)})")
    return None


def _said(failure: Failure) -> str:
    code = "" if failure.code == str(failure.status) else failure.code  # llama.cpp's code is its HTTP status again
    return " ".join(part for part in (f"HTTP {failure.status}", code, failure.param) if part)


def _misconfigured(setting: str, detail: str, fix: str) -> ModelMisconfigured:
    return ModelMisconfigured(messages.MODEL_MISCONFIGURED, setting=setting, detail=detail, fix=fix)


def failure_of(exc: openai.APIError) -> Failure:
    """The parts of an openai exception `classify` needs."""
    import openai

    status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
    # llama.cpp's server writes the HTTP status as the error's `code` (an integer): no code of OpenAI's.
    code = exc.code if isinstance(exc.code, str) else ""
    return Failure(status=status, code=code, param=exc.param or "", kind=exc.type or "", message=exc.message)


def is_azure(client: AsyncOpenAI) -> bool:
    """Whether the client talks to Azure OpenAI's v1 endpoint (how `bot.app.builders` points it there)."""
    return "/openai/v1" in str(client.base_url)


def outcome(error: BaseException | None) -> str:
    """A short label for metrics: "ok", or the kind of error (model_misconfigured, model_unavailable, ...)."""
    if error is None:
        return "ok"
    name = type(error).__name__
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


@dataclass
class CallEnd:
    """How one model call ended, filled in as it ends: "ok", "cancelled" or the kind of error, and its seconds."""

    outcome: str = "cancelled"  # the turn's timeout cancels a call still running
    seconds: float = 0.0


@asynccontextmanager
async def model_call(client: AsyncOpenAI, *, model: str, profile: str, chained: bool) -> AsyncIterator[CallEnd]:
    """Around one Responses API call: time it; raise openai's errors as Folio errors that name the cause."""
    import openai

    started, end = time.monotonic(), CallEnd()
    try:
        yield end
        end.outcome = "ok"
    except (openai.APIError, NotAResponse) as exc:
        call = Call(model=model, profile=profile, azure=is_azure(client), chained=chained)
        error = not_the_api(exc, call) if isinstance(exc, NotAResponse) else classify(failure_of(exc), call)
        end.outcome = outcome(error)
        _tell_operator(error, where=str(client.base_url))
        raise error from exc
    finally:
        end.seconds = time.monotonic() - started


def check_response(response: ModelReply) -> None:
    """Raise for a response the service took but could not finish: failed, or stopped by a content filter."""
    if response.status == "failed":
        raise ModelUnavailable(f"The model service failed to answer: {response.error or 'no detail'}")
    if response.status == "incomplete" and response.incomplete_reason == "content_filter":
        raise ContentFiltered(messages.CONTENT_FILTERED, detail="the content filter stopped the answer")


_last_told: dict[str, float] = {}


def _tell_operator(error: FolioError, *, where: str) -> None:
    """Log what an admin must fix, naming the setting; the same line at most once a minute."""
    if isinstance(error, KeepsNoResponses):
        return  # the agent switches to resending (auto), or logs it naming FOLIO_MODEL_STATE (server)
    if isinstance(error, ModelMisconfigured):
        line = f"model configuration: {error.setting}: {error.detail}: {error.fix} (service {where})"
    elif isinstance(error, ModelRefused) and not isinstance(error, ContentFiltered | ContextTooLong):
        line = f"model service: {error.detail} (service {where})"
    else:
        return  # outages are logged where the turn falls back; filters and long threads are the asker's to handle
    now = time.monotonic()
    if now - _last_told.get(line, float("-inf")) < LOG_EVERY:
        return
    _last_told[line] = now
    log.error(line)
