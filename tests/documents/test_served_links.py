"""`folio serve` with FOLIO_PUBLIC_URL: the signed link in a Slack answer opens the PDF from Folio itself."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from yarl import URL

from bot import messages
from bot.app import SAMPLE_CORPUS
from bot.app.builders import link_signing_key as build_link_key
from bot.cli.serve import ServeHooks, serve
from bot.config import load_settings
from bot.documents import signed_path
from bot.slack.site import Bind
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack, FakeSocketMode
from tests.slack.harness import wait_until

SECRET = "documents-signing-secret"
PUBLIC = "https://folio.example/"
CHANNEL = "C0SAMPLE01"
LINK = re.compile(r"<(https://folio\.example/view/[^|>]+)\|\[1\]>")
PDF_LINK = re.compile(r'<a href="(/documents/[^"]+)" rel="alternate">')


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def model() -> Iterator[FakeResponses]:
    with FakeResponses() as fake:
        yield fake
        assert fake.problems == []


@pytest.fixture
def environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, slack: FakeSlack, model: FakeResponses, redis_url: str
) -> None:
    (tmp_path / "channels.yaml").write_text(f"tag_keys: [department]\nchannels:\n  {CHANNEL}:\n    container: sample\n")
    for name, value in {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "OPENAI_API_KEY": "sk-fake",
        "OPENAI_BASE_URL": model.base_url,
        "FOLIO_CODE_INTERPRETER": "false",
        "REDIS_URL": redis_url,
        "FOLIO_DATA_DIR": str(tmp_path / "data"),
        "FOLIO_PUBLIC_URL": PUBLIC,
        "FOLIO_STREAMING": "false",  # the link is read from the answer message's mrkdwn
    }.items():
        monkeypatch.setenv(name, value)


def mention(ts: str) -> dict[str, str]:
    return {
        "type": "app_mention",
        "user": "U0ALICE01",
        "text": f"<@{BOT_USER}> refund window?",
        "ts": ts,
        "channel": CHANNEL,
        "event_ts": ts,
    }


def slack_headers(body: str) -> dict[str, str]:
    stamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}", "Content-Type": "application/json"}


def answer_link(slack: FakeSlack, ts: str) -> str:
    """The signed viewer URL behind [1] in Folio's answer, as a browser would follow it (mrkdwn unescaped)."""
    [answer] = slack.thread(CHANNEL, ts)
    found = LINK.search(answer.blocks[0]["text"]["text"])
    assert found, answer.blocks[0]["text"]["text"]
    url = html.unescape(found.group(1))
    assert "&page=1&" in url and "#" not in url
    return url


async def pdf_behind(http: aiohttp.ClientSession, view: str) -> str:
    """The viewer's "Open the PDF" link, without its #page fragment."""
    status, headers, content = await fetch(http, view)
    assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8"), content
    found = PDF_LINK.search(content.decode())
    assert found, content.decode()
    return view.split("/view/", 1)[0] + html.unescape(found.group(1)).split("#", 1)[0]


async def fetch(http: aiohttp.ClientSession, url: str) -> tuple[int, dict[str, str], bytes]:
    async with http.get(URL(url, encoded=True)) as response:
        return response.status, dict(response.headers), await response.read()


async def test_a_signed_link_from_an_http_answer_opens_the_pdf_and_a_tampered_one_is_refused(
    environment: None, slack: FakeSlack, model: FakeResponses, tmp_path: Path
) -> None:
    model.script(tools(search("refund window monthly plans")), reply("Monthly plans: 14 days [S1]."))
    stop, ports = asyncio.Event(), []
    server = asyncio.create_task(
        serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=stop, started=ports.append))
    )
    try:
        await wait_until(lambda: ports or server.done())
        event = {"type": "event_callback", "team_id": TEAM, "event_id": "EvDocs1", "event": mention("1800.1")}
        body = json.dumps(event)
        async with aiohttp.ClientSession() as http:
            local = f"http://127.0.0.1:{ports[0]}"
            async with http.post(f"{local}/slack/events", data=body, headers=slack_headers(body)) as response:
                assert response.status == 200
            await wait_until(lambda: slack.thread(CHANNEL, "1800.1"))
            view = answer_link(slack, "1800.1").replace(PUBLIC.rstrip("/"), local)  # the proxy in front of Folio
            link = await pdf_behind(http, view)
            file = link.split("?")[0].rsplit("/", 1)[1]

            status, headers, content = await fetch(http, link)
            assert status == 200
            assert headers["Content-Type"] == "application/pdf"
            assert headers["Content-Disposition"].startswith("inline")
            assert content == (SAMPLE_CORPUS / file).read_bytes()

            tampered = link[:-1] + ("0" if link[-1] != "0" else "1")
            status, _, content = await fetch(http, tampered)
            assert (status, content.decode()) == (403, messages.LINK_REFUSED + "\n")
            status, _, content = await fetch(http, link.replace(f"/sample/{file}", "/sample/..%2F..%2Flink.key"))
            assert status in (403, 404) and b"%PDF" not in content and len(content) < 400

            key = build_link_key(load_settings(None))
            expired = local + signed_path(key, "sample", file, expires=int(time.time()) - 1)
            status, _, content = await fetch(http, expired)
            assert (status, content.decode()) == (403, messages.LINK_REFUSED + "\n")

            (tmp_path / "data" / "documents" / "sample" / file).unlink()
            status, _, content = await fetch(http, link)
            assert (status, content.decode()) == (404, messages.DOCUMENT_GONE + "\n")
    finally:
        stop.set()
        assert await server == 0


async def test_socket_mode_with_a_public_url_serves_document_links_on_port(
    environment: None, monkeypatch: pytest.MonkeyPatch, slack: FakeSlack, model: FakeResponses, tmp_path: Path
) -> None:
    model.script(tools(search("refund window monthly plans")), reply("Monthly plans: 14 days [S1]."))
    monkeypatch.setenv("SLACK_APP_TOKEN", slack.app_token)
    monkeypatch.delenv("SLACK_SIGNING_SECRET")  # then links are signed with a key generated in the data folder
    with FakeSocketMode(slack) as socket:
        stop, ports = asyncio.Event(), []
        server = asyncio.create_task(
            serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=stop, started=ports.append))
        )
        try:
            await wait_until(lambda: (socket.connected and ports) or server.done())
            await asyncio.to_thread(socket.send_event, mention("1800.2"))
            await wait_until(lambda: slack.thread(CHANNEL, "1800.2"))
            view = answer_link(slack, "1800.2").replace(PUBLIC.rstrip("/"), f"http://127.0.0.1:{ports[0]}")
            async with aiohttp.ClientSession() as http:
                status, headers, content = await fetch(http, await pdf_behind(http, view))
        finally:
            stop.set()
            assert await server == 0
    assert (status, headers["Content-Type"]) == (200, "application/pdf")
    assert content.startswith(b"%PDF")
    assert (tmp_path / "data" / "link.key").is_file()


async def test_slack_answers_never_carry_file_links_of_the_server(
    environment: None, monkeypatch: pytest.MonkeyPatch, slack: FakeSlack, model: FakeResponses
) -> None:
    model.script(tools(search("refund window monthly plans")), reply("Monthly plans: 14 days [S1]."))
    monkeypatch.delenv("FOLIO_PUBLIC_URL")
    stop, ports = asyncio.Event(), []
    server = asyncio.create_task(
        serve(load_settings(None), host="127.0.0.1", port=0, hooks=ServeHooks(stop=stop, started=ports.append))
    )
    try:
        await wait_until(lambda: ports or server.done())
        event = {"type": "event_callback", "team_id": TEAM, "event_id": "EvDocs3", "event": mention("1800.3")}
        body = json.dumps(event)
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{ports[0]}/slack/events"
            async with http.post(url, data=body, headers=slack_headers(body)) as response:
                assert response.status == 200
            await wait_until(lambda: slack.thread(CHANNEL, "1800.3"))
            status, _, _ = await fetch(http, f"http://127.0.0.1:{ports[0]}/documents/sample/refund_policy_2026.pdf")
    finally:
        stop.set()
        assert await server == 0
    [answer] = slack.thread(CHANNEL, "1800.3")
    assert answer.blocks[0]["text"]["text"].startswith("Monthly plans: 14 days [1]")
    assert "file://" not in json.dumps(answer.blocks)
    assert status == 404  # no FOLIO_PUBLIC_URL: Folio serves no documents


@pytest.mark.parametrize(
    ("file", "kind"),
    [
        ("notes.markdown", "text/markdown; charset=utf-8"),
        ("notes.md", "text/markdown; charset=utf-8"),
        ("notes.txt", "text/plain; charset=utf-8"),
        ("orders.xlsx.pdf", "application/pdf"),
    ],
)
async def test_each_indexable_kind_of_document_is_served_as_what_it_is(tmp_path: Path, file: str, kind: str) -> None:
    # Issue 18, item 11: `folio index` accepts .markdown, but the route answered every suffix but .txt and .md as a PDF.
    from bot.cli.document_links import DocumentServer, serve_documents
    from bot.documents import DocumentStore

    source = tmp_path / file
    source.write_text("# Notes\n\nRefunds within 14 days.\n")
    store = DocumentStore(tmp_path / "documents")
    assert await store.keep("hr", file, source)
    key, ports = b"k" * 32, []
    async with serve_documents(
        DocumentServer(store=store, key=key), Bind(host="127.0.0.1", port=0), started=ports.append
    ):
        async with aiohttp.ClientSession() as http:
            link = f"http://127.0.0.1:{ports[0]}" + signed_path(key, "hr", file, expires=int(time.time()) + 60)
            status, headers, content = await fetch(http, link)

    assert (status, headers["Content-Type"], content) == (200, kind, source.read_bytes())
