"""Drives the real Bolt app the way Slack does: signed HTTP requests into its /slack/events endpoint.

The app's Web API client points at FakeSlack, its model at FakeResponses, its search at the local index over
../shared/corpus, its state at the session's Redis. `settle()` waits for every turn the app started.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp

from bot.models import Chunk, Scope
from bot.retrieval import Retriever, SearchIndex
from bot.slack.services import SlackFolio
from bot.store import ConversationStore, ThreadKey
from bot.store.feedback import FeedbackStore
from bot.tasks import BackgroundTasks
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack

SECRET = "test-signing-secret"
CHANNEL = "C0BENEFIT1"  # connected to container "benefits", tag keys department and year
LOCKED = "C0LOCKED01"  # not in the policy, and the policy has no default
DM = "D0ALICE001"
ALICE, BOB, ADMIN = "U0ALICE01", "U0BOB0001", "U0ADMIN01"

POLICY = {
    "tag_keys": ["department", "year"],
    "channels": {
        CHANNEL: {"container": "benefits"},
        "C0HRONLY01": {"container": "benefits", "tags": ["department:hr"]},
    },
    "dm": {"container": "benefits"},
}


class Clock:
    """Time that moves only when a test moves it (`clock.now += 61`), for the code that takes a clock."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class RecordingRetriever(Retriever):
    """The real local retriever, with every scope it was asked to search recorded."""

    def __init__(self, inner: SearchIndex) -> None:
        self.inner = inner
        self.scopes: list[Scope] = []
        self.down = False
        self.delay = 0.0  # seconds each search takes, to let a turn run out of time while it searches

    async def search(self, query: str, scope: Scope, *, top: int) -> list[Chunk]:
        self.scopes.append(scope)
        await asyncio.sleep(self.delay)
        if self.down:
            from bot.errors import SearchUnavailable

            raise SearchUnavailable("The index is not reachable.")
        return await self.inner.search(query, scope, top=top)

    async def still_indexed(self, files: Collection[tuple[str, str]]) -> set[tuple[str, str]]:
        return await self.inner.still_indexed(files)

    async def passage_texts(self, shown: Collection[Chunk]) -> dict[str, str]:
        return await self.inner.passage_texts(shown)

    def __getattr__(self, name: str) -> Any:  # writing and listing (files shared in threads): the index itself
        return getattr(self.inner, name)


def sign(body: str, *, secret: str = SECRET, timestamp: int | None = None) -> dict[str, str]:
    """Slack's request signature: v0=HMAC-SHA256(secret, "v0:{timestamp}:{body}")."""
    stamp = str(timestamp if timestamp is not None else int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


def envelope(event: dict[str, Any], *, event_id: str | None = None) -> str:
    """The body of the Events API request that delivers `event`."""
    return json.dumps(
        {
            "token": "legacy",
            "team_id": TEAM,
            "api_app_id": "A0FOLIO01",
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(_ids):08d}",
            "event_time": int(time.time()),
            "event": {**event, "event_ts": event["ts"]},
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True, "is_enterprise_install": False}],
        }
    )


_user_ts = itertools.count(1)
_ids = itertools.count(1)


async def wait_until(condition, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    """Poll until `condition()` is true; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never came true"
        await asyncio.sleep(0.05)


def user_ts() -> str:
    return f"1800000000.{next(_user_ts):06d}"


@dataclass
class Harness:
    url: str
    slack: FakeSlack
    model: FakeResponses
    store: ConversationStore
    tasks: BackgroundTasks
    retriever: RecordingRetriever
    http: aiohttp.ClientSession
    responses: list[tuple[int, str]] = field(default_factory=list)
    folio: SlackFolio | None = None  # the running Folio: its services and its consumer

    @property
    def feedback_records(self) -> FeedbackStore:
        """The feedback records the running Folio keeps."""
        assert self.folio is not None
        return self.folio.stores.feedback

    async def post(self, body: str, content_type: str, *, headers: dict[str, str] | None = None) -> tuple[int, str]:
        sent = {"Content-Type": content_type, **sign(body), **(headers or {})}
        async with self.http.post(self.url, data=body.encode(), headers=sent) as response:
            answer = (response.status, await response.text())
        self.responses.append(answer)
        return answer

    async def event(self, event: dict[str, Any], *, event_id: str | None = None, retry: int = 0) -> int:
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"} if retry else {}
        status, _ = await self.post(envelope(event, event_id=event_id), "application/json", headers=headers)
        return status

    async def mention(
        self,
        text: str,
        *,
        channel: str = CHANNEL,
        user: str = ALICE,
        thread_ts: str | None = None,
        ts: str | None = None,
        **extra: Any,
    ) -> str:
        """An @mention as Slack delivers it: an `app_mention` and, beside it, a `message` event; `team` is the
        asker's workspace (`user_team=...` says another organisation's, as in a Slack Connect channel)."""
        ts = ts or user_ts()
        common = {
            "user": user,
            "text": f"<@{BOT_USER}> {text}",
            "ts": ts,
            "channel": channel,
            "team": TEAM,
            "user_team": self.slack.user_teams.get(user, TEAM),
            **extra,
        }
        if thread_ts:
            common["thread_ts"] = thread_ts
        await self.event({"type": "app_mention", **common})
        await self.event({"type": "message", "channel_type": "channel", "client_msg_id": f"m-{ts}", **common})
        return ts

    async def message(
        self,
        text: str,
        *,
        channel: str = CHANNEL,
        user: str = ALICE,
        thread_ts: str | None = None,
        channel_type: str = "channel",
        ts: str | None = None,
        **extra: Any,
    ) -> str:
        """A plain message (a thread reply, a DM, another bot's post with `bot_id=...`)."""
        ts = ts or user_ts()
        event = {
            "type": "message",
            "channel": channel,
            "channel_type": channel_type,
            "user": user,
            "text": text,
            "ts": ts,
            "team": TEAM,
            "user_team": self.slack.user_teams.get(user, TEAM),
            **extra,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        await self.event(event)
        return ts

    async def command(self, text: str, *, channel: str = CHANNEL, user: str = ALICE) -> tuple[int, str]:
        form = {
            "token": "legacy",
            "team_id": TEAM,
            "team_domain": "folio-test",
            "channel_id": channel,
            "channel_name": "benefits",
            "user_id": user,
            "user_name": "alice",
            "command": "/ask",
            "text": text,
            "api_app_id": "A0FOLIO01",
            "response_url": self.slack.response_url(),
            "trigger_id": f"tr.{next(_ids)}",
        }
        return await self.post(urlencode(form), "application/x-www-form-urlencoded")

    async def click(
        self,
        action_id: str,
        *,
        thread_ts: str,
        message_ts: str,
        turn: int = 0,
        user: str = ALICE,
        channel: str = CHANNEL,
        value: str | None = None,
    ) -> int:
        """A click on a button under a message; `value`: the button's value as Slack sends it (default {turn})."""
        payload = {
            "type": "block_actions",
            "user": {"id": user, "team_id": TEAM},
            "api_app_id": "A0FOLIO01",
            "token": "legacy",
            "trigger_id": f"tr.{next(_ids)}",
            "team": {"id": TEAM, "domain": "folio-test"},
            "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "thread_ts": thread_ts},
            "channel": {"id": channel, "name": "benefits"},
            "message": {"type": "message", "ts": message_ts, "thread_ts": thread_ts, "bot_id": "BFOLIO01", "text": ""},
            "response_url": self.slack.response_url("action"),
            "actions": [
                {
                    "action_id": action_id,
                    "block_id": "b1",
                    "type": "button",
                    "value": json.dumps({"turn": turn}) if value is None else value,
                    "action_ts": str(time.time()),
                }
            ],
        }
        status, _ = await self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
        return status

    async def feedback(
        self, rating: str, *, thread_ts: str, message_ts: str, turn: int = 0, user: str = ALICE, channel: str = CHANNEL
    ) -> int:
        """A click on Slack's native feedback buttons (`rating` "helpful" or "not_helpful") under an answer."""
        payload = {
            "type": "block_actions",
            "user": {"id": user, "team_id": TEAM},
            "api_app_id": "A0FOLIO01",
            "token": "legacy",
            "trigger_id": f"tr.{next(_ids)}",
            "team": {"id": TEAM, "domain": "folio-test"},
            "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "thread_ts": thread_ts},
            "channel": {"id": channel, "name": "benefits"},
            "message": {"type": "message", "ts": message_ts, "thread_ts": thread_ts, "bot_id": "BFOLIO01", "text": ""},
            "response_url": self.slack.response_url("action"),
            "actions": [
                {
                    "type": "feedback_buttons",
                    "action_id": "folio_feedback",
                    "block_id": "fb",
                    "value": f"{rating}:{turn}",
                    "action_ts": str(time.time()),
                }
            ],
        }
        status, _ = await self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
        return status

    async def submit(self, view: dict[str, Any], values: dict[str, Any], *, user: str = ALICE) -> int:
        """A person sends a modal Folio opened: `values` is Slack's `state.values` (block_id -> action_id -> value)."""
        payload = {
            "type": "view_submission",
            "team": {"id": TEAM, "domain": "folio-test"},
            "user": {"id": user, "team_id": TEAM},
            "api_app_id": "A0FOLIO01",
            "token": "legacy",
            "trigger_id": f"tr.{next(_ids)}",
            "view": {**view, "id": "V00000001", "team_id": TEAM, "state": {"values": values}, "hash": "1.abc"},
        }
        status, _ = await self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
        return status

    async def private_click(self, value: str, *, user: str = ALICE, channel: str = CHANNEL) -> int:
        """A click on a button of an ephemeral message (Slack sends no `message` for those, only its container)."""
        payload = {
            "type": "block_actions",
            "user": {"id": user, "team_id": TEAM},
            "api_app_id": "A0FOLIO01",
            "token": "legacy",
            "trigger_id": f"tr.{next(_ids)}",
            "team": {"id": TEAM, "domain": "folio-test"},
            "container": {
                "type": "message",
                "message_ts": "1700000099.000001",
                "channel_id": channel,
                "is_ephemeral": True,
            },
            "channel": {"id": channel, "name": "benefits"},
            "response_url": self.slack.response_url("action"),
            "actions": [
                {
                    "type": "button",
                    "action_id": "folio_private",
                    "block_id": "p",
                    "value": value,
                    "action_ts": str(time.time()),
                }
            ],
        }
        status, _ = await self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
        return status

    async def settle(self) -> None:
        """Wait for every turn and button action the app started."""
        await self.tasks.drain()

    def thread_key(self, thread_ts: str, channel: str = CHANNEL) -> ThreadKey:
        return ThreadKey(team=TEAM, channel=channel, thread_ts=thread_ts)

    def texts(self, thread_ts: str, channel: str = CHANNEL) -> list[str]:
        """What a person sees in the thread: each of Folio's messages as its streamed markdown and its blocks' text
        (or its text)."""
        return [
            "\n".join(filter(None, (message.markdown, _visible_text(message.blocks)))) or message.text
            for message in self.slack.thread(channel, thread_ts)
        ]

    def ephemeral(self, user: str = ALICE) -> list[str]:
        return [call["text"] for call in self.slack.calls_of("chat.postEphemeral") if call.get("user") == user]


def _visible_text(blocks: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for block in blocks:
        if "text" in block and isinstance(block["text"], dict):
            parts.append(block["text"]["text"])
        for element in block.get("elements", []):
            text = element.get("text")
            parts.append(text["text"] if isinstance(text, dict) else str(text or ""))
    return "\n".join(part for part in parts if part)
