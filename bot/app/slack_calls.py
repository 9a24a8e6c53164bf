"""Slack's retry chain: every Web API call's outcome counted (folio_slack_api_errors_total), and 429s waited out."""

from __future__ import annotations

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from bot import metrics


class SlackCallMeter(AsyncRetryHandler):
    """Counts every Web API call's outcome; never asks for a retry.

    Not a retry policy: slack_sdk shows each response (and each connection error) to its retry handlers, and Bolt
    copies them into the client it makes for every request, so this is the one place that sees every call. It goes
    first in the list, so that it sees responses the handlers after it retry.
    """

    async def can_retry_async(
        self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:  # fmt: skip
        method = request.url.split("?", 1)[0].rsplit("/", 1)[-1]
        if error is not None:
            metrics.slack_call(method, "connection")
        elif response is not None:
            body = response.body or {}
            ok = body.get("ok", response.status_code < 400)
            metrics.slack_call(method, None if ok else str(body.get("error") or f"http_{response.status_code}"))
        return False


class RateLimitRetry(AsyncRateLimitErrorRetryHandler):
    """Every method answered HTTP 429 is retried after its Retry-After (slack_sdk's handler), except the one that
    opens a stream: a turn refused a stream is posted at once instead (bot.slack.stream) rather than kept waiting."""

    NOT_WAITED_FOR = frozenset({"chat.startStream"})

    async def _can_retry_async(
        self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:  # fmt: skip
        method = request.url.split("?", 1)[0].rsplit("/", 1)[-1]
        return method not in self.NOT_WAITED_FOR and response is not None and response.status_code == 429
