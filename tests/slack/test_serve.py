"""`folio serve` end to end from environment variables: HTTP events in, answers out through the fake Slack."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import aiohttp
import pytest
import redis
from redis import asyncio as aioredis

from bot import messages
from bot.cli import main
from bot.cli.serve import ServeHooks, serve
from bot.config import load_settings
from bot.errors import ConfigurationError
from bot.store.watch import Note, Outbox
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack, FakeSocketMode
from tests.slack.harness import SECRET, sign, wait_until

CHANNELS = "tag_keys: [department]\nchannels:\n  C0SAMPLE01:\n    container: sample\n"


@pytest.fixture
def environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses, redis_url: str
) -> None:
    (tmp_path / "channels.yaml").write_text(CHANNELS)
    for name, value in {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "OPENAI_API_KEY": "sk-fake",
        "OPENAI_BASE_URL": fake_model.base_url,
        "FOLIO_CODE_INTERPRETER": "false",
        "REDIS_URL": redis_url,
        "FOLIO_DATA_DIR": str(tmp_path / "data"),
        "FOLIO_DOCS_BASE_URL": "https://files.example/docs",
    }.items():
        monkeypatch.setenv(name, value)


async def test_folio_serve_answers_a_mention_over_signed_http(
    environment: None, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    fake_model.script(tools(search("refund policy")), reply("Refunds within 30 days [S1]."))
    stop, ports = asyncio.Event(), []
    server = asyncio.create_task(
        serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=stop, started=ports.append))
    )
    await wait_until(lambda: ports or server.done())
    event = {
        "type": "app_mention",
        "user": "U0ALICE01",
        "text": f"<@{BOT_USER}> refund policy?",
        "ts": "1800.000001",
        "channel": "C0SAMPLE01",
        "event_ts": "1800.000001",
    }
    body = json.dumps({"type": "event_callback", "team_id": TEAM, "event_id": "EvServe1", "event": event})

    async with aiohttp.ClientSession() as http:
        url = f"http://127.0.0.1:{ports[0]}/slack/events"
        async with http.post(url, data=body, headers={**sign(body), "Content-Type": "application/json"}) as response:
            assert response.status == 200
        async with http.get(f"http://127.0.0.1:{ports[0]}/healthz") as health:  # for load balancers' probes
            assert (health.status, await health.text()) == (200, "ok")
    await wait_until(lambda: any(message.blocks for message in slack.thread("C0SAMPLE01", "1800.000001")))
    stop.set()
    assert await server == 0

    [answer] = slack.thread("C0SAMPLE01", "1800.000001")  # streamed: FOLIO_STREAMING is on unless turned off
    linked = "Refunds within 30 days [[1]](https://files.example/docs/refund_policy_"
    assert answer.markdown.startswith(linked) and "Sources" in json.dumps(answer.blocks)


async def test_folio_serve_without_a_channel_file_names_it(environment: None, tmp_path: Path) -> None:
    (tmp_path / "channels.yaml").unlink()
    with pytest.raises(ConfigurationError, match="channels.yaml does not exist"):
        await serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=asyncio.Event()))


def test_folio_serve_without_slack_says_so_and_chats_in_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("FOLIO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr("sys.stdin", io.StringIO("exit\n"))

    assert main(["serve"]) == 0

    assert capsys.readouterr().out.splitlines()[0] == messages.SLACK_NOT_CONFIGURED


async def test_folio_serve_in_socket_mode_answers_an_envelope_and_acks_it(
    environment: None, monkeypatch: pytest.MonkeyPatch, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    fake_model.script(tools(search("refund policy")), reply("Refunds within 30 days [S1]."))
    monkeypatch.setenv("SLACK_APP_TOKEN", slack.app_token)
    monkeypatch.delenv("SLACK_SIGNING_SECRET")  # not needed in Socket Mode
    monkeypatch.setenv("FOLIO_STREAMING", "false")  # today's single answer message
    with FakeSocketMode(slack) as socket:
        stop = asyncio.Event()
        server = asyncio.create_task(serve(load_settings(None), hooks=ServeHooks(stop=stop)))
        await wait_until(lambda: socket.connected or server.done())
        event = {
            "type": "app_mention",
            "user": "U0ALICE01",
            "text": f"<@{BOT_USER}> refund policy?",
            "ts": "1800.000002",
            "channel": "C0SAMPLE01",
            "event_ts": "1800.000002",
        }

        envelope_id = await asyncio.to_thread(socket.send_event, event)
        await wait_until(lambda: slack.thread("C0SAMPLE01", "1800.000002"))
        stop.set()
        assert await server == 0

    assert envelope_id in [ack.get("envelope_id") for ack in socket.acks]
    [answer] = slack.thread("C0SAMPLE01", "1800.000002")
    assert answer.blocks[0]["text"]["text"].startswith("Refunds within 30 days <https://files.example/docs/")


async def test_folio_serve_over_http_needs_the_signing_secret(
    environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLACK_SIGNING_SECRET")
    with pytest.raises(ConfigurationError, match="SLACK_SIGNING_SECRET is not set"):
        await serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=asyncio.Event()))


ACCESS_CHANNELS = CHANNELS + "access:\n  groups:\n    finance-team: [finance]\n    finanse-team: [finance]\n"


@pytest.mark.parametrize(
    ("failure", "logged"),
    [
        (None, "no user group with the handle finanse-team"),
        ("missing_scope", "missing_scope"),  # the token lacks usergroups:read: say so, not "did not answer"
    ],
)
async def test_folio_serve_reports_the_policys_group_handles_it_cannot_resolve_at_start(
    environment: None,
    slack: FakeSlack,
    tmp_path: Path,
    redis_url: str,
    caplog: pytest.LogCaptureFixture,
    failure: str | None,
    logged: str,
) -> None:
    (tmp_path / "channels.yaml").write_text(ACCESS_CHANNELS)
    with redis.Redis.from_url(redis_url) as shared:  # serve keeps its cache under the default prefix
        for key in shared.scan_iter("folio:access:*"):
            shared.delete(key)
    slack.add_usergroup("S0FIN0001", "finance-team", [])
    if failure:
        slack.fail("usergroups.list", failure)
    stop, ports = asyncio.Event(), []
    server = asyncio.create_task(
        serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=stop, started=ports.append))
    )
    await wait_until(lambda: ports or server.done())
    stop.set()
    assert await server == 0

    [warning] = [record.getMessage() for record in caplog.records if "user group" in record.getMessage()]
    assert logged in warning and "finance-team," not in warning


async def test_folio_serve_posts_a_watch_note_queued_while_it_serves(
    environment: None, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    """A syncer without a Slack token queued a note after Folio started: its timer posts it (FOLIO_WATCH_SWEEP_SECONDS)."""
    monkeypatch.setenv("FOLIO_WATCH_SWEEP_SECONDS", "1")
    with redis.Redis.from_url(redis_url) as shared:  # serve's outbox is under the default prefix: start it empty
        shared.delete(*shared.keys("{folio:watch}:*") or ["-"])
    stop, ports = asyncio.Event(), []
    server = asyncio.create_task(
        serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=stop, started=ports.append))
    )
    await wait_until(lambda: ports or server.done())
    note = Note(id="a" * 24, team=TEAM, channel="C0SAMPLE01", thread_ts="1800.000009", text="A document changed.")
    queue = aioredis.from_url(redis_url)
    assert await Outbox(queue, prefix="folio").add(note)

    await wait_until(lambda: slack.thread("C0SAMPLE01", "1800.000009"), timeout=10)
    stop.set()
    assert await server == 0
    assert await Outbox(queue, prefix="folio").pending() == 0
    await queue.aclose()
    [posted] = slack.thread("C0SAMPLE01", "1800.000009")
    assert posted.text == "A document changed." and posted.metadata["event_payload"] == {"note": "a" * 24}
