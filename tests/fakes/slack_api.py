"""A fake Slack Web API on 127.0.0.1, for the real `slack_sdk` AsyncWebClient (and Bolt's `respond`).

    with FakeSlack(admins={"UADMIN"}) as slack:
        client = AsyncWebClient(token=slack.token, base_url=slack.base_url)
        slack.fail("chat.update", "msg_too_long")            # the next chat.update answers ok: false
        slack.rate_limit("chat.postMessage", retry_after=1)  # the next one is HTTP 429 + Retry-After
        slack.calls                                          # every call: method + params (form or JSON, as sent)
        slack.thread("C1", "1700000000.000100")              # Folio's visible messages in a thread, oldest first
        slack.views_of("C1", ts)                             # what a person saw of one message, change by change
        slack.connections                                    # TCP connections accepted (HTTP/1.1 keep-alive)
        slack.add_usergroup("S0FIN0001", "finance-team", ["U1"])  # served by usergroups.list / .users.list
        slack.channel_members["C1"] = ["U1"]                 # served by conversations.members, in pages
        slack.private_channels.add("C2")                     # conversations.info: is_private (a C id, as Slack gives)
        slack.titles, slack.prompts                          # what assistant.threads.setTitle / setSuggestedPrompts set
        slack.modals, slack.homes["U1"]                      # views opened (views.open); U1's Home tab (views.publish)
        slack.share_channel("C1", with_team="T0PARTNER")     # Slack Connect: conversations.info says is_ext_shared
        slack.add_user("U0GUEST01", team="T0PARTNER")        # a person of another organisation (users.info)
        file = slack.add_file("contract.pdf", data, user="U1")  # served by files.info and its url_private_download
        slack.downloads                                      # (file id, whether the bot token came with it)
        slack.emails["ana@example.com"] = "U0ALICE01"        # served by users.lookupByEmail (users:read.email)
        slack.slow["chat.postMessage"] = 2.0                 # each post waits 2 s before Slack takes it

It answers like Slack: `ok`, `ts`, `channel`; the bot token's granted scopes in the `x-oauth-scopes` header of every
token-authenticated call (`scopes=...`); `invalid_auth` for a wrong token; `message_not_found` for an update or
delete of an unknown ts; `ratelimited` with HTTP 429 and `Retry-After`. Streamed messages follow Slack's rules
(tests/fakes/slack_stream.py): a stream's markdown and task cards are kept on its Message, and every change of any
message is recorded as a `View`, so a test reads what a person saw at each moment. `response_url` posts land on
`{url}/respond/{id}` (see `response_url()`) and are recorded as calls of method `response_url`.
Shared files are served as Slack serves them: `files.info` (needs `files:read`) describes one, and its
`url_private_download` gives the bytes only with the bot token in an Authorization header; without it Slack answers
its sign-in page, HTML with status 200, and so does this fake.
`FakeSocketMode` adds the Socket Mode WebSocket that `apps.connections.open` (with the xapp- token) points to.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web

from tests.fakes import Loopback
from tests.fakes.slack_blocks import blocks_problem
from tests.fakes.slack_stream import StreamState, View, apply, content_problem, start_problem, total_problem

Json = dict[str, Any]
TEAM = "T0FOLIO01"
PARTNER = "T0PARTNER"  # another organisation's workspace (Slack Connect)
# What an install from manifest.yaml grants (tests of missing scopes pass fewer).
GRANTED = (
    "app_mentions:read",
    "channels:history",
    "groups:history",
    "im:history",
    "chat:write",
    "commands",
    "users:read",
    "usergroups:read",
    "channels:read",
    "groups:read",
    "assistant:write",
    "files:read",
    "users:read.email",
)
BOT_USER = "UFOLIOBOT"
BOT_ID = "BFOLIO01"


@dataclass(frozen=True)
class SlackCall:
    """One Web API call as the fake received it; `blocks` arrive as JSON text in forms and are parsed here."""

    method: str
    params: Json
    at: float = field(default_factory=time.monotonic)  # when it arrived (time.monotonic)


@dataclass
class Message:
    channel: str
    ts: str
    text: str
    blocks: list[Json] = field(default_factory=list)
    thread_ts: str | None = None
    stream: StreamState | None = None  # set for a message started with chat.startStream
    metadata: Json | None = None  # chat.postMessage's `metadata` ({event_type, event_payload}), as Slack keeps it

    @property
    def markdown(self) -> str:
        return self.stream.markdown if self.stream else ""


@dataclass
class UserGroup:
    """A Slack user group as usergroups.list describes it; `disabled` groups are listed only when asked for."""

    id: str
    handle: str
    users: list[str]
    disabled: bool = False

    def as_json(self, *, with_users: bool) -> Json:
        group = {
            "id": self.id,
            "team_id": TEAM,
            "is_usergroup": True,
            "name": self.handle.title(),
            "description": "",
            "handle": self.handle,
            "is_external": False,
            "date_create": 1700000000,
            "date_update": 1700000000,
            "date_delete": 1700000001 if self.disabled else 0,
            "auto_type": None,
            "created_by": "U0ADMIN01",
            "updated_by": "U0ADMIN01",
            "deleted_by": None,
            "prefs": {"channels": [], "groups": []},
            "user_count": len(self.users),
        }
        return {**group, "users": list(self.users)} if with_users else group


@dataclass(frozen=True)
class _Failure:
    error: str
    status: int = 200
    retry_after: int | None = None


class FakeSlack:
    """The Web API methods Folio uses, with failures you can inject per method."""

    def __init__(
        self,
        *,
        token: str = "xoxb-test-token",
        app_token: str = "xapp-test-token",
        admins: set[str] | None = None,
        scopes: tuple[str, ...] = GRANTED,
    ) -> None:
        self.token = token
        self.scopes = scopes
        self.app_token = app_token
        self.socket_url: str | None = None  # what apps.connections.open hands out (see FakeSocketMode)
        self.admins = set(admins or ())
        self.calls: list[SlackCall] = []
        self.limited: list[SlackCall] = []  # the calls a tier (see `tier`) answered HTTP 429
        self.connections = 0  # TCP connections accepted: a client that keeps its connections alive opens few
        self.messages: dict[tuple[str, str], Message] = {}
        self.usergroups: dict[str, UserGroup] = {}
        self.channel_members: dict[str, list[str]] = {}
        self.private_channels: set[str] = set()  # private channels with C ids (Slack's ids for new ones since 2021)
        self.titles: dict[tuple[str, str], str] = {}  # (channel, thread_ts) -> the assistant thread's title
        # (channel, thread_ts) -> the status shown under the thread: set by assistant.threads.setStatus, cleared by
        # the app's next message in the thread ("automatically cleared when the app sends a reply", Slack's docs)
        self.statuses: dict[tuple[str, str], str] = {}
        self.prompts: dict[tuple[str, str | None], Json] = {}  # (channel, thread_ts or None) -> {title, prompts}
        self.views: list[View] = []
        # A broken or hostile Slack: method -> (params, the answer the fake would give) -> the answer sent instead.
        self.hostile: dict[str, Callable[[Json, Json], Json]] = {}
        self.shared_with: dict[str, list[str]] = {}  # channel -> the other organisations' teams it is shared with
        self.user_teams: dict[str, str] = {}  # user -> their home team, when not this workspace
        self.emails: dict[str, str] = {}  # e-mail address -> user ID, for users.lookupByEmail
        self.deactivated: set[str] = set()  # users whose account is deactivated (users.* say deleted: true)
        self.modals: list[Json] = []  # views opened with views.open, in order
        self.homes: dict[str, Json] = {}  # user -> their Home tab as last published (views.publish)
        self.home_tab = True  # the manifest's home_tab_enabled: False makes views.publish answer not_enabled
        self.slow: dict[str, float] = {}  # method -> seconds each call waits before Slack takes it (a slow Slack)
        self.files: dict[str, Json] = {}  # file id -> the file object files.info gives
        self.file_bytes: dict[str, bytes] = {}
        self.downloads: list[tuple[str, bool]] = []  # (file id, whether the bot token came with the request)
        self._failures: dict[str, deque[_Failure]] = defaultdict(deque)
        self._tiers: dict[str, tuple[int, float, bool, defaultdict[str, deque[float]]]] = {}
        self._ts = itertools.count(1)
        self._lock = threading.Lock()
        self._loopback = Loopback(_handler_for(self)).start()

    @property
    def url(self) -> str:
        return self._loopback.url

    @property
    def base_url(self) -> str:
        return f"{self.url}/api/"

    def response_url(self, name: str = "cmd") -> str:
        return f"{self.url}/respond/{name}"

    def fail(self, method: str, error: str = "internal_error", *, times: int = 1, status: int = 200) -> None:
        """The next `times` calls of `method` answer `{"ok": false, "error": error}`."""
        with self._lock:
            self._failures[method].extend(_Failure(error, status) for _ in range(times))

    def rate_limit(self, method: str, *, retry_after: int = 1, times: int = 1) -> None:
        """The next `times` calls of `method` are HTTP 429 `ratelimited` with a Retry-After header."""
        with self._lock:
            self._failures[method].extend(_Failure("ratelimited", 429, retry_after) for _ in range(times))

    def tier(self, method: str, *, per_window: int, window: float = 60.0, per_channel: bool = False) -> None:
        """Slack's per-method rate tier: past `per_window` calls in any `window` seconds, `method` answers HTTP 429
        `ratelimited` with Retry-After (whole seconds until the oldest call in the window leaves it). `per_channel`:
        counted per `channel` param (chat.postMessage's own limit), not per workspace."""
        with self._lock:
            self._tiers[method] = (per_window, window, per_channel, defaultdict(deque))

    def add_usergroup(self, group_id: str, handle: str, users: list[str], *, disabled: bool = False) -> None:
        """A user group Slack knows; change `usergroups[group_id].users` later to move people in or out."""
        with self._lock:
            self.usergroups[group_id] = UserGroup(group_id, handle, list(users), disabled)

    def share_channel(self, channel: str, *, with_team: str = PARTNER) -> None:
        """Slack Connect: the channel is now shared with another organisation's workspace."""
        with self._lock:
            self.shared_with.setdefault(channel, []).append(with_team)

    def add_user(self, user: str, *, team: str = PARTNER) -> None:
        """A person whose home workspace is `team` (users.info answers with it)."""
        with self._lock:
            self.user_teams[user] = team

    def add_file(
        self, name: str, data: bytes, *, user: str, team: str = TEAM, mimetype: str = "", size: int | None = None
    ) -> Json:
        """A file someone shared; returns the object a message event carries in its `files` (`size` may lie)."""
        with self._lock:
            file_id = f"F{len(self.files) + 1:08d}"
            url = f"{self.url}/files-pri/{TEAM}-{file_id}/download/{name}"
            self.files[file_id] = {
                "id": file_id,
                "name": name,
                "title": name,
                "mimetype": mimetype or "application/octet-stream",
                "filetype": name.rsplit(".", 1)[-1],
                "size": len(data) if size is None else size,
                "user": user,
                "user_team": team,
                "mode": "hosted",
                "is_external": False,
                "url_private": url,
                "url_private_download": url,
            }
            self.file_bytes[file_id] = data
            return dict(self.files[file_id])

    def download(self, path: str, authorization: str) -> tuple[int, str, bytes]:
        """A GET of a file's private URL: (status, content type, body), as Slack answers it."""
        file_id = path.split("/")[2].split("-", 1)[-1]
        authorized = authorization == f"Bearer {self.token}" and "files:read" in self.scopes
        with self._lock:
            self.downloads.append((file_id, authorized))
            data = self.file_bytes.get(file_id)
        if not authorized:
            return 200, "text/html", b"<!DOCTYPE html><html><body>Sign in to Slack</body></html>"
        if data is None:
            return 404, "text/plain", b"not found"
        return 200, self.files[file_id]["mimetype"], data

    def calls_of(self, method: str) -> list[Json]:
        with self._lock:
            return [call.params for call in self.calls if call.method == method]

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        """Messages posted by the app and still visible in a thread (root included), oldest first."""
        with self._lock:
            found = [m for m in self.messages.values() if m.channel == channel and thread_ts in (m.ts, m.thread_ts)]
        return sorted(found, key=lambda message: float(message.ts))

    def views_of(self, channel: str, ts: str) -> list[View]:
        """Every state one message was seen in, oldest first (its last is what is seen now)."""
        with self._lock:
            return [view for view in self.views if (view.channel, view.ts) == (channel, ts)]

    def close(self) -> None:
        self._loopback.stop()

    def __enter__(self) -> FakeSlack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the methods --------------------------------------------------------------------------------------------
    def handle(self, method: str, params: Json, token: str | None) -> tuple[int, Json, _Failure | None]:
        with self._lock:
            self.calls.append(SlackCall(method, params))
            queued = self._failures.get(method)
            failure = queued.popleft() if queued else self._over_tier(method, params)
            if failure is not None:
                return failure.status, {"ok": False, "error": failure.error}, failure
            expected = self.app_token if method == "apps.connections.open" else self.token
            if method != "response_url" and token != expected:
                return 200, {"ok": False, "error": "invalid_auth"}, None
            answer = getattr(self, "_" + method.replace(".", "_"), None)
            if answer is None:
                return 200, {"ok": False, "error": "unknown_method"}, None
            if method.startswith("chat.") and (problem := blocks_problem(params.get("blocks"))):
                return 200, {"ok": False, "error": problem}, None
            hostile = self.hostile.get(method)
            return 200, (hostile(params, answer(params)) if hostile else answer(params)), None

    def _over_tier(self, method: str, params: Json) -> _Failure | None:
        if method not in self._tiers:
            return None
        limit, window, per_channel, counted = self._tiers[method]
        calls = counted[str(params.get("channel")) if per_channel else ""]
        now = time.monotonic()
        while calls and calls[0] <= now - window:
            calls.popleft()
        if len(calls) >= limit:
            self.limited.append(self.calls[-1])
            return _Failure("ratelimited", 429, max(1, math.ceil(calls[0] + window - now)))
        calls.append(now)
        return None

    def _next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    def _auth_test(self, params: Json) -> Json:
        return {
            "ok": True,
            "url": "https://folio-test.slack.com/",
            "team": "Folio Test",
            "user": "folio",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _chat_postMessage(self, params: Json) -> Json:
        if not params.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if not params.get("text") and not params.get("blocks"):
            return {"ok": False, "error": "no_text"}
        message = Message(
            params["channel"],
            self._next_ts(),
            params.get("text", ""),
            params.get("blocks") or [],
            params.get("thread_ts"),
            metadata=_metadata(params.get("metadata")),
        )
        self.messages[(message.channel, message.ts)] = message
        self._replied(message)
        self._saw(message)
        return {
            "ok": True,
            "channel": message.channel,
            "ts": message.ts,
            "message": {"type": "message", "text": message.text, "bot_id": BOT_ID, "ts": message.ts},
        }

    def _conversations_replies(self, params: Json) -> Json:
        """A thread's messages, oldest first, the root first; `metadata` only with include_all_metadata (as Slack),
        paged by `limit` and an opaque `cursor`."""
        channel, ts = params.get("channel", ""), params.get("ts", "")
        found = sorted(
            (m for m in self.messages.values() if m.channel == channel and ts in (m.ts, m.thread_ts)),
            key=lambda message: float(message.ts),
        )
        if not found:
            return {"ok": False, "error": "thread_not_found"}
        start, limit = int(params.get("cursor") or 0), int(params.get("limit") or 1000)
        with_metadata = str(params.get("include_all_metadata")).lower() in ("true", "1")
        page = [
            {
                "type": "message",
                "ts": m.ts,
                "thread_ts": m.thread_ts or m.ts,
                "text": m.text,
                "bot_id": BOT_ID,
                **({"metadata": m.metadata} if with_metadata and m.metadata else {}),
            }
            for m in found[start : start + limit]
        ]
        following = str(start + limit) if start + limit < len(found) else ""
        return {
            "ok": True,
            "messages": page,
            "has_more": bool(following),
            "response_metadata": {"next_cursor": following},
        }

    def _chat_update(self, params: Json) -> Json:
        message = self.messages.get((params.get("channel", ""), params.get("ts", "")))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        message.text = params.get("text", "")
        message.blocks = params.get("blocks") or []
        message.stream = None  # an update replaces what was streamed too
        self._saw(message)
        return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text}

    def _chat_delete(self, params: Json) -> Json:
        message = self.messages.pop((params.get("channel", ""), params.get("ts", "")), None)
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        self._saw(message, deleted=True)
        return {"ok": True, "channel": params["channel"], "ts": params["ts"]}

    def _chat_startStream(self, params: Json) -> Json:
        problem = start_problem(params)
        if problem:
            return {"ok": False, "error": problem}
        recipient = (params.get("recipient_user_id"), params.get("recipient_team_id"))
        state = StreamState(recipient=recipient)
        message = Message(params["channel"], self._next_ts(), "", [], params["thread_ts"], state)
        apply(message.stream, params)
        self.messages[(message.channel, message.ts)] = message
        self._replied(message)
        self._saw(message)
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def _chat_appendStream(self, params: Json) -> Json:
        message, refused = self._stream_call(params, required=True)
        if refused or message is None:
            return refused or {}
        self._saw(message)
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def _chat_stopStream(self, params: Json) -> Json:
        message, refused = self._stream_call(params, required=False)
        if refused or message is None or message.stream is None:
            return refused or {}
        message.stream.streaming = False
        message.text = message.stream.markdown
        message.blocks = params.get("blocks") or []
        self._saw(message)
        return {
            "ok": True,
            "channel": message.channel,
            "ts": message.ts,
            "message": {
                "type": "message",
                "subtype": "bot_message",
                "text": message.text,
                "bot_id": BOT_ID,
                "ts": message.ts,
            },
        }

    def _stream_call(self, params: Json, *, required: bool) -> tuple[Message | None, Json | None]:
        """Check an append or stop against the stream it names and show its content; (message, refusal)."""
        message, problem = self._streaming(params)
        problem = problem or content_problem(params, required=required)
        if not problem and message is not None and message.stream is not None:
            problem = total_problem(message.stream, params)
        if problem or message is None or message.stream is None:
            return message, {"ok": False, "error": problem}
        apply(message.stream, params)
        return message, None

    def _streaming(self, params: Json) -> tuple[Message | None, str | None]:
        message = self.messages.get((params.get("channel", ""), params.get("ts", "")))
        if message is None:
            return None, "message_not_found"
        if message.stream is None or not message.stream.streaming:
            return message, "message_not_in_streaming_state"
        return message, None

    def _replied(self, message: Message) -> None:
        """The app's message in a thread clears the thread's status."""
        if message.thread_ts:
            self.statuses.pop((message.channel, message.thread_ts), None)

    def _saw(self, message: Message, *, deleted: bool = False) -> None:
        """Record what the message looks like now (called under the lock, after every change)."""
        state = message.stream
        self.views.append(
            View(
                at=time.time(),
                channel=message.channel,
                ts=message.ts,
                text=message.text,
                markdown=state.markdown if state else "",
                tasks=tuple(map(dict, state.tasks.values())) if state else (),
                blocks=tuple(message.blocks),
                streaming=bool(state and state.streaming),
                deleted=deleted,
            )
        )

    def _chat_postEphemeral(self, params: Json) -> Json:
        return {"ok": True, "message_ts": self._next_ts()}

    def _assistant_threads_setStatus(self, params: Json) -> Json:
        self.statuses[(params.get("channel_id", ""), params.get("thread_ts", ""))] = params.get("status", "")
        return {"ok": True}

    def status_of(self, channel: str, thread_ts: str) -> str:
        """The status a person sees under the thread now ("" when none)."""
        return self.statuses.get((channel, thread_ts), "")

    def _users_info(self, params: Json) -> Json:
        user = params.get("user", "")
        if not user:
            return {"ok": False, "error": "user_not_found"}
        admin = user in self.admins
        team = self.user_teams.get(user, TEAM)
        profile = {
            "id": user,
            "team_id": team,
            "name": user.lower(),
            "deleted": False,
            "is_admin": admin,
            "is_owner": False,
            "is_primary_owner": False,
            "is_restricted": False,
            "is_ultra_restricted": False,
            "is_bot": False,
            "is_app_user": False,
            "updated": 1700000000,
            "profile": {"team": team, "real_name": user, "display_name": user.lower()},
        }
        return {"ok": True, "user": profile}

    def _users_lookupByEmail(self, params: Json) -> Json:  # noqa: N802 - Slack's method name
        """Slack's answer: the user object, or users_not_found; missing_scope without users:read.email."""
        if "users:read.email" not in self.scopes:
            return {"ok": False, "error": "missing_scope", "needed": "users:read.email"}
        user = self.emails.get(str(params.get("email", "")).lower())
        if user is None:
            return {"ok": False, "error": "users_not_found"}
        team = self.user_teams.get(user, TEAM)
        return {
            "ok": True,
            "user": {
                "id": user,
                "team_id": team,
                "name": user.lower(),
                "deleted": user in self.deactivated,
                "is_bot": False,
                "profile": {"email": params.get("email")},
            },
        }

    def _conversations_open(self, params: Json) -> Json:
        """The bot's DM with one person: the same channel every time (`D` + the user ID's tail)."""
        users = str(params.get("users") or "").split(",")
        if len(users) != 1 or not users[0]:
            return {"ok": False, "error": "not_enough_users" if not users[0] else "too_many_users"}
        return {"ok": True, "channel": {"id": "D" + users[0][1:], "is_im": True, "user": users[0]}}

    def _chat_getPermalink(self, params: Json) -> Json:
        channel, ts = params.get("channel", ""), params.get("message_ts", "")
        if not channel or not ts:
            return {"ok": False, "error": "message_not_found"}
        return {
            "ok": True,
            "channel": channel,
            "permalink": f"https://folio-test.slack.com/archives/{channel}/p{ts.replace('.', '')}",
        }

    def _views_open(self, params: Json) -> Json:
        """A modal, checked as Slack does: a trigger_id, a modal view whose title / submit / close fit 24
        characters, at most 100 blocks; `invalid_arguments` otherwise."""
        view = params.get("view")
        if isinstance(view, str):  # a form body carries it as JSON text
            view = json.loads(view)
        if not params.get("trigger_id") or not isinstance(view, dict) or view.get("type") != "modal":
            return {"ok": False, "error": "invalid_arguments"}
        labels = [view.get(key) for key in ("title", "submit", "close") if key in view]
        if not view.get("title") or any(len(label.get("text", "")) > 24 for label in labels):
            return {"ok": False, "error": "invalid_arguments"}
        if len(view.get("blocks") or []) > 100 or len(view.get("private_metadata") or "") > 3000:
            return {"ok": False, "error": "invalid_arguments"}
        self.modals.append(view)
        return {"ok": True, "view": {"id": f"V{len(self.modals):08d}", "team_id": TEAM, **view}}

    def _views_publish(self, params: Json) -> Json:
        """A person's Home tab, checked as Slack does: a user_id, a `home` view (no title, submit or close) of at
        most 100 blocks; `not_enabled` when the app's Home tab is off (manifest `home_tab_enabled`). Answers with the
        view as published (id, hash, app and bot ids); `homes[user]` is what that person's tab shows now."""
        view = params.get("view")
        if isinstance(view, str):  # a form body carries it as JSON text
            view = json.loads(view)
        user = str(params.get("user_id") or "")
        if not user or not isinstance(view, dict) or view.get("type") not in {"home", "modal"}:
            return {"ok": False, "error": "invalid_arguments"}
        if view["type"] != "home" or any(key in view for key in ("title", "submit", "close")):
            return {"ok": False, "error": "invalid_arguments"}
        if len(view.get("blocks") or []) > 100 or len(view.get("private_metadata") or "") > 3000:
            return {"ok": False, "error": "invalid_arguments"}
        if not self.home_tab:
            return {"ok": False, "error": "not_enabled"}
        view_id = self.homes[user]["id"] if user in self.homes else f"VH{len(self.homes) + 1:07d}"  # one per person
        self.homes[user] = {
            **view,
            "id": view_id,
            "team_id": TEAM,
            "close": None,
            "submit": None,
            "state": {"values": {}},
            "hash": f"{time.time():.7f}",
            "root_view_id": view_id,
            "previous_view_id": None,
            "app_id": "A0FOLIO01",
            "external_id": view.get("external_id", ""),
            "bot_id": BOT_ID,
        }
        return {"ok": True, "view": self.homes[user]}

    def _conversations_info(self, params: Json) -> Json:
        """Slack's channel object: `is_shared` for any sharing, `is_ext_shared` with another organisation,
        `is_org_shared` across an Enterprise Grid organisation's workspaces."""
        channel = params.get("channel", "")
        if channel[:1] not in {"C", "G", "D"}:
            return {"ok": False, "error": "channel_not_found"}
        partners = self.shared_with.get(channel, [])
        is_im = channel.startswith("D")
        info = {
            "id": channel,
            "name": channel.lower(),
            "is_channel": channel.startswith("C"),
            "is_group": channel.startswith("G"),
            "is_im": is_im,
            "is_mpim": False,
            "is_private": channel in self.private_channels or not channel.startswith("C"),
            "created": 1700000000,
            "is_archived": False,
            "is_general": False,
            "unlinked": 0,
            "name_normalized": channel.lower(),
            "is_shared": bool(partners),
            "is_ext_shared": bool(partners),
            "is_org_shared": False,
            "is_pending_ext_shared": False,
            "pending_shared": [],
            "context_team_id": TEAM,
            "shared_team_ids": [TEAM, *partners],
            "conversation_host_id": TEAM,
            "is_member": True,
        }
        if partners:
            info["connected_team_ids"] = [TEAM, *partners]
        return {"ok": True, "channel": info}

    def _usergroups_list(self, params: Json) -> Json:
        disabled, users = _flag(params.get("include_disabled")), _flag(params.get("include_users"))
        listed = [group for group in self.usergroups.values() if disabled or not group.disabled]
        return {"ok": True, "usergroups": [group.as_json(with_users=users) for group in listed]}

    def _usergroups_users_list(self, params: Json) -> Json:
        if not params.get("usergroup"):
            return {"ok": False, "error": "invalid_arguments"}
        group = self.usergroups.get(params["usergroup"])
        if group is None:
            return {"ok": False, "error": "no_such_subteam"}
        if group.disabled and not _flag(params.get("include_disabled")):
            return {"ok": True, "users": []}
        return {"ok": True, "users": list(group.users)}

    def _conversations_members(self, params: Json) -> Json:
        members = self.channel_members.get(params.get("channel", ""))
        if members is None:
            return {"ok": False, "error": "channel_not_found"}
        limit = int(params.get("limit") or 100)
        cursor = str(params.get("cursor") or "0")
        if not cursor.isdigit():
            return {"ok": False, "error": "invalid_cursor"}
        start = int(cursor)
        if not 1 <= limit <= 1000:
            return {"ok": False, "error": "invalid_limit"}
        end = start + limit
        following = str(end) if end < len(members) else ""
        return {"ok": True, "members": members[start:end], "response_metadata": {"next_cursor": following}}

    def _assistant_threads_setTitle(self, params: Json) -> Json:
        if not (params.get("channel_id") and params.get("thread_ts") and params.get("title")):
            return {"ok": False, "error": "invalid_arguments"}
        self.titles[(params["channel_id"], params["thread_ts"])] = params["title"]
        return {"ok": True}

    def _assistant_threads_setSuggestedPrompts(self, params: Json) -> Json:
        prompts = params.get("prompts")
        if isinstance(prompts, str):  # a form body carries it as JSON text
            prompts = json.loads(prompts)
        well_formed = (
            isinstance(prompts, list)
            and 1 <= len(prompts) <= 4
            and all(
                isinstance(p, dict)
                and set(p) == {"title", "message"}
                and all(isinstance(v, str) and v for v in p.values())
                for p in prompts
            )
        )
        if not params.get("channel_id") or not well_formed:
            return {"ok": False, "error": "invalid_arguments"}
        self.prompts[(params["channel_id"], params.get("thread_ts"))] = {
            "title": params.get("title"),
            "prompts": prompts,
        }
        return {"ok": True}

    def _apps_connections_open(self, params: Json) -> Json:
        # Without a FakeSocketMode, a WebSocket URL nobody answers on (Slack hands one out for every valid token).
        return {"ok": True, "url": self.socket_url or "ws://127.0.0.1:9/link"}

    def _response_url(self, params: Json) -> Json:
        return {"ok": True}

    def _files_info(self, params: Json) -> Json:
        if "files:read" not in self.scopes:
            return {"ok": False, "error": "missing_scope", "needed": "files:read"}
        file = self.files.get(str(params.get("file")))
        return {"ok": True, "file": dict(file)} if file else {"ok": False, "error": "file_not_found"}


def _flag(value: Any) -> bool:
    """A boolean argument as slack_sdk sends it: true/false in JSON, 1/0 or true/false in a query string."""
    return value is True or str(value).lower() in {"1", "true"}


def _parse_body(raw: bytes, content_type: str) -> Json:
    if "application/json" in content_type:
        params = json.loads(raw or b"{}")
    else:
        params = dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
    if isinstance(params.get("blocks"), str):
        params["blocks"] = json.loads(params["blocks"])
    return params


def _handler_for(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as Slack does: the client's session reuses its connections
        disable_nagle_algorithm = True  # headers and body go out in two writes: without this, ~40 ms per call

        def setup(self) -> None:
            super().setup()
            with fake._lock:
                fake.connections += 1

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path, _, query = self.path.partition("?")
            if path.startswith("/files-pri/"):
                self._send_file(path)
                return
            # slack_sdk sends some methods' arguments in the query string (`params=`), others as a form or JSON
            params = {**dict(parse_qsl(query)), **_parse_body(raw, self.headers.get("Content-Type", ""))}
            if path.startswith("/respond/"):
                method, token = "response_url", None
            elif path.startswith("/api/"):
                method = path.removeprefix("/api/")
                bearer = self.headers.get("Authorization", "")
                token = bearer.removeprefix("Bearer ") if bearer else params.get("token")
            else:
                self.send_error(404)
                return
            time.sleep(fake.slow.get(method, 0.0))  # in this request's own thread: other calls go on meanwhile
            status, payload, failure = fake.handle(method, params, token)
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            if failure is not None and failure.retry_after is not None:
                self.send_header("Retry-After", str(failure.retry_after))
            if token == fake.token and payload.get("error") != "invalid_auth":
                self.send_header("x-oauth-scopes", ",".join(fake.scopes))
            self.end_headers()
            self.wfile.write(body)

        def _send_file(self, path: str) -> None:
            status, content_type, body = fake.download(path, self.headers.get("Authorization", ""))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST  # noqa: N815 - users.info and a few others are GET requests with a query string

        def log_message(self, *args: object) -> None:  # quiet: pytest shows failures, not access logs
            pass

    return Handler


class FakeSocketMode:
    """Slack's Socket Mode end: a WebSocket on 127.0.0.1 that says hello, sends envelopes and records the acks.

    with FakeSlack() as slack, FakeSocketMode(slack) as socket:   # apps.connections.open now hands out its URL
        socket.send_event({...})                                   # an events_api envelope; returns its id
        socket.acks                                                # {"envelope_id": ...} messages received
    """

    def __init__(self, slack: FakeSlack) -> None:
        self.acks: list[Json] = []
        self._sockets: list[web.WebSocketResponse] = []
        self._ids = itertools.count(1)
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self._thread.start()
        started.wait(10)
        slack.socket_url = self.url

    @property
    def url(self) -> str:
        assert self._runner is not None
        return f"ws://127.0.0.1:{self._runner.addresses[0][1]}/link"

    @property
    def connected(self) -> int:
        return sum(not socket.closed for socket in self._sockets)

    def send_event(self, event: Json, *, team: str = TEAM) -> str:
        """Deliver an Events API payload as Slack does in Socket Mode; returns the envelope id to await an ack."""
        envelope_id = f"env-{next(self._ids)}"
        payload = {"type": "event_callback", "team_id": team, "event_id": f"EvS{envelope_id}", "event": event}
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "payload": payload,
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
        }
        asyncio.run_coroutine_threadsafe(self._broadcast(envelope), self._loop).result(10)
        return envelope_id

    def close(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> FakeSocketMode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        application = web.Application()
        application.router.add_get("/link", self._connection)
        self._runner = web.AppRunner(application)
        self._loop.run_until_complete(self._runner.setup())
        self._loop.run_until_complete(web.TCPSite(self._runner, "127.0.0.1", 0).start())
        started.set()
        self._loop.run_forever()

    async def _connection(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self._sockets.append(socket)
        await socket.send_json(
            {
                "type": "hello",
                "num_connections": 1,
                "connection_info": {"app_id": "A0FOLIO01"},
                "debug_info": {"host": "fake", "approximate_connection_time": 3600},
            }
        )
        async for message in socket:
            if message.type == WSMsgType.TEXT:
                self.acks.append(json.loads(message.data))
        return socket

    async def _broadcast(self, envelope: Json) -> None:
        for socket in self._sockets:
            if not socket.closed:
                await socket.send_json(envelope)


def _metadata(value: object) -> Json | None:
    """chat.postMessage's `metadata`: an object, or its JSON text in a form post; Slack refuses one without an
    event_type or payload, here it is simply not kept."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, dict) and value.get("event_type") and isinstance(value.get("event_payload"), dict):
        return value
    return None
