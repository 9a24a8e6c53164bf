"""Slack's retry chain: every Web API call's outcome counted (folio_slack_api_errors_total), and 429s waited out;
and chat.postMessage paced per channel, so that a burst of answers stays inside Slack's tier in the first place."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot import metrics


class SlackCallMeter(AsyncRetryHandler):
    """Counts every Web API call's outcome; never asks for a retry.

    Not a retry policy: slack_sdk shows each response (and each connection error) to its retry handlers, and Bolt
    copies them into the client it makes for every request, so this is the one place that sees every call. It goes
    first in the list, so that it sees responses the handlers after it retry.
    """

    async def can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        method = request.url.split("?", 1)[0].rsplit("/", 1)[-1]
        if error is not None:
            metrics.slack_call(method, "connection")
        elif response is not None:
            body = response.body or {}
            ok = body.get("ok", response.status_code < 400)
            metrics.slack_call(method, None if ok else str(body.get("error") or f"http_{response.status_code}"))
        return False


class RateLimitRetry(AsyncRateLimitErrorRetryHandler):
    """Every method answered HTTP 429 is retried after its Retry-After (slack_sdk's handler), except the ones that
    open and feed a stream: a turn refused a stream is posted at once instead, and a refused append's text waits for
    the stream's stop (bot.slack.stream) rather than keep the turn's end waiting."""

    NOT_WAITED_FOR = frozenset({"chat.startStream", "chat.appendStream"})

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        method = request.url.split("?", 1)[0].rsplit("/", 1)[-1]
        return method not in self.NOT_WAITED_FOR and response is not None and response.status_code == 429


class ChannelPacer:
    """Slack's pace for chat.postMessage, per channel, kept before the call rather than learnt from a 429.

    Slack documents chat.postMessage as special-tier: it "generally allows posting one message per second per
    channel, while also maintaining a workspace-wide limit"; "Short bursts >1 allowed", with no number given
    (https://docs.slack.dev/apis/web-api/rate-limits). So a token bucket per channel: `burst` posts at once, then
    `per_second`. Each caller reserves its slot before it sleeps (no lock needed on one event loop), so a burst of
    answers leaves in order, one a second. Channels whose bucket is full again are forgotten: memory stays bounded.
    """

    def __init__(self, *, per_second: float = 1.0, burst: int = 3, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_second = per_second
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # channel -> (tokens left, when), least recently used first

    async def wait(self, channel: str) -> None:
        """Returns once a post to `channel` keeps within the pace (at once while the burst lasts)."""
        delay = self.reserve(channel, self._clock())
        if delay > 0:
            await asyncio.sleep(delay)

    def reserve(self, channel: str, now: float) -> float:
        """Takes the next slot of `channel`; the seconds until it comes (tokens go below zero for waiting posts)."""
        tokens, when = self._buckets.pop(channel, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - when) * self.per_second) - 1
        self._buckets[channel] = (tokens, now)
        self._forget_idle(now)
        return max(0.0, -tokens / self.per_second)

    def _forget_idle(self, now: float) -> None:
        while self._buckets:  # the least recently used first: the first one still refilling stops the sweep
            channel, (tokens, when) = next(iter(self._buckets.items()))
            if tokens + (now - when) * self.per_second < self.burst:
                return
            del self._buckets[channel]

    def channels(self) -> int:
        """How many channels it remembers (those still refilling)."""
        return len(self._buckets)


class PacedWebClient(AsyncWebClient):
    """The Web API client whose chat.postMessage waits for its channel's pace (`ChannelPacer`)."""

    def __init__(self, *, pacer: ChannelPacer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pacer = pacer

    async def chat_postMessage(self, *, channel: str, **kwargs: Any) -> AsyncSlackResponse:  # noqa: N802 (SDK name)
        await self.pacer.wait(channel)
        return await super().chat_postMessage(channel=channel, **kwargs)

    def like(self, client: AsyncWebClient) -> PacedWebClient:
        """`client` (Bolt makes a plain one for every request, from this one's settings) with this one's pacer."""
        return PacedWebClient(
            pacer=self.pacer,
            token=client.token,
            base_url=client.base_url,
            timeout=client.timeout,
            ssl=client.ssl,
            proxy=client.proxy,
            session=client.session,
            trust_env_in_session=client.trust_env_in_session,
            headers=dict(client.headers),
            team_id=client.default_params.get("team_id"),
            logger=client.logger,
            retry_handlers=client.retry_handlers,
        )
