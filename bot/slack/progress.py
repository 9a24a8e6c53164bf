"""The Slack status-line view of a turn (a `bot.turns.TurnView`): the assistant thread status, else a placeholder.

The status (assistant.threads.setStatus) shows under the thread and disappears when Folio posts in the thread ("The
status will be automatically cleared when the app sends a reply", Slack's docs of the method); where Slack refuses
it, a placeholder message is posted and edited as tools run, then replaced by the answer. Progress is best effort:
a failed update is logged, never fatal. `failed()` never raises, so a failure always reaches the thread if Slack does.
A turn that resumes a delivery an earlier attempt began (`resumed_ts`) edits that attempt's message instead.
"""

from __future__ import annotations

import logging
import time

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.agent.events import AnswerText, Step
from bot.models import Answer, Scope
from bot.slack.failures import describe_failure
from bot.slack.render import SlackMessage, escape, render_answer, render_notice

log = logging.getLogger(__name__)

UPDATE_INTERVAL = 1.0  # seconds between progress edits: chat.update is rate limited, and a 429 would stall the turn


class StatusLineView:
    """One turn's progress indicator in one thread, then its answer."""

    def __init__(self, client: AsyncWebClient, *, channel: str, thread_ts: str, resumed_ts: str | None = None) -> None:
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._status = False
        self._last_update = float("-inf")
        self.placeholder_ts: str | None = resumed_ts

    async def working(self, title: str) -> None:
        """Show that work began: the thread status when Slack allows it, else a placeholder message."""
        if self.placeholder_ts:  # an earlier attempt's message: it says so again
            try:
                await self._edit(render_notice(f"_{escape(title)}_"))
                return
            except SlackApiError as exc:  # deleted meanwhile: start afresh
                log.info("could not reuse message %s: %s", self.placeholder_ts, exc.response.get("error"))
                self.placeholder_ts = None
        await self._start(title)

    def writes_text(self) -> bool:
        return False

    async def step_started(self, step: Step) -> None:
        await self.update(step.title)

    async def step_ended(self, step: Step) -> None:
        return None

    async def text(self, piece: AnswerText) -> None:
        return None

    async def answer(self, answer: Answer, *, scope: Scope, turn_index: int, basis: str | None) -> str | None:
        return await self.finish(render_answer(answer, scope=scope, turn_index=turn_index, basis=basis))

    async def notice(self, text: str) -> None:
        """Post one more message in the thread, after the answer; never raises."""
        try:
            await self._post(render_notice(text))
        except Exception:  # see failed()
            log.exception("could not post to the thread: %s", text)

    async def failed(self, error: BaseException) -> str | None:
        """Show what went wrong in the thread and clear the indicator; never raises. Returns the message ts."""
        return await self.fail(describe_failure(error))

    async def _start(self, text: str) -> None:
        try:
            await self._set_status(text)
            self._status = True
            return
        except SlackApiError as exc:
            log.info("thread status unavailable (%s); using a placeholder message", exc.response.get("error"))
        self.placeholder_ts = await self._post(render_notice(f"_{escape(text)}_"))

    async def update(self, text: str) -> None:
        """Show what Folio is doing now, e.g. "Searching: payment terms Supplier A" (at most one edit a second)."""
        now = time.monotonic()
        if now - self._last_update < UPDATE_INTERVAL:
            return
        self._last_update = now
        try:
            if self._status:
                await self._set_status(text)
            elif self.placeholder_ts:
                await self._edit(render_notice(f"_{escape(text)}_"))
        except Exception:  # best effort: a lost progress line must never fail the turn
            log.warning("progress update failed", exc_info=True)

    def shown_ts(self) -> str | None:
        """The placeholder this view shows (None while only the thread status says Folio is at work)."""
        return self.placeholder_ts

    async def finish(self, message: SlackMessage, *, replacing: str | None = None) -> str:
        """Replace the indicator (or `replacing`: a message another view showed, e.g. a stream) with `message`;
        returns the ts of the message that now shows it."""
        shown = replacing or self.placeholder_ts
        if shown:
            try:
                await self._client.chat_update(
                    channel=self._channel, ts=shown, text=message.text, blocks=message.block_dicts()
                )
                return shown
            except SlackApiError as exc:  # e.g. the placeholder was deleted meanwhile: post the answer anew
                log.warning("could not replace the placeholder: %s", exc.response.get("error"))
        ts = await self._post(message)
        self._status = False  # Slack clears the thread's status when the app replies in it: no call needed
        return ts

    async def fail(self, text: str, *, replacing: str | None = None) -> str | None:
        """Show a failure in the thread (in `replacing`, as `finish`) and clear the indicator; never raises. Returns
        the message ts, if shown."""
        try:
            return await self.finish(render_notice(text), replacing=replacing)
        except Exception:  # Slack itself failing (an API error or the network): nothing more to show, only to log
            log.exception("could not tell the thread about a failure: %s", text)
            try:
                await self.clear()
            except Exception:
                log.warning("could not clear the thread status either")
            return None

    async def clear(self) -> None:
        """Remove the thread status (posting a message clears it too; this covers the paths that post nothing)."""
        if not self._status:
            return
        self._status = False
        try:
            await self._set_status("")
        except SlackApiError as exc:
            log.warning("could not clear the thread status: %s", exc.response.get("error"))

    async def _edit(self, message: SlackMessage) -> None:
        assert self.placeholder_ts is not None  # edits follow the placeholder `working` posted (or a resumed one)
        await self._client.chat_update(
            channel=self._channel, ts=self.placeholder_ts, text=message.text, blocks=message.block_dicts()
        )

    async def _set_status(self, text: str) -> None:
        await self._client.assistant_threads_setStatus(channel_id=self._channel, thread_ts=self._thread_ts, status=text)

    async def _post(self, message: SlackMessage) -> str:
        response = await self._client.chat_postMessage(
            channel=self._channel,
            thread_ts=self._thread_ts,
            text=message.text,
            blocks=message.block_dicts(),
            unfurl_links=False,
            unfurl_media=False,  # a link in an answer is shown as written, never previewed
        )
        return str(response["ts"])
