"""Prometheus metrics: scraped from /metrics after real turns through the Bolt app, from FOLIO_METRICS_PORT in Socket
Mode, and added up across processes in prometheus-client's multiprocess mode."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.cli.serve import ServeHooks, serve
from bot.config import load_settings
from tests.conftest import ROOT
from tests.fakes.openai_responses import FakeResponses, error, reply, search, tools
from tests.fakes.slack_api import BOT_USER, FakeSlack, FakeSocketMode
from tests.slack.harness import ALICE, CHANNEL, Harness, wait_until

QUESTION = "What protection is there against balance billing?"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def scrape(http: aiohttp.ClientSession, url: str) -> Samples:
    async with http.get(url) as response:
        assert response.status == 200 and response.headers["Content-Type"].startswith("text/plain")
        return parse(await response.text())


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


async def test_metrics_move_with_turns_through_the_real_app(harness: Harness) -> None:
    url = harness.url.replace("/slack/events", "/metrics")
    before = await scrape(harness.http, url)
    harness.model.script(tools(search("balance billing protection")), reply("Protected in network [S1]."))
    ts = await harness.mention(QUESTION)
    await harness.settle()
    retried = {"type": "app_mention", "user": ALICE, "text": f"<@{BOT_USER}> {QUESTION}", "ts": ts, "channel": CHANNEL}
    await harness.event(retried, retry=1)  # Slack delivers it again: dropped, counted
    bad_marker = reply("Protected [S1], see also [S9].")
    harness.model.script(tools(search("balance billing protection")), bad_marker, bad_marker)
    await harness.mention(QUESTION)  # [S9] named no source shown: removed, after one correction round
    await harness.settle()
    harness.model.script(error(500))
    harness.slack.fail("assistant.threads.setStatus", "not_allowed_token_type")
    await harness.mention(QUESTION)  # the model is down: quoted passages, under a placeholder message
    await harness.settle()

    after = await scrape(harness.http, url)

    assert moved(before, after, "folio_turns_total", outcome="answered", profile="fast") == 2
    assert moved(before, after, "folio_turns_total", outcome="search_only", profile="fast") == 1
    assert moved(before, after, "folio_turn_seconds_count", profile="fast") == 3
    assert moved(before, after, "folio_first_feedback_seconds_count") == 3
    assert moved(before, after, "folio_model_calls_total", profile="fast", outcome="ok") == 5
    assert moved(before, after, "folio_model_calls_total", profile="fast", outcome="model_unavailable") == 1
    assert moved(before, after, "folio_model_call_seconds_count", profile="fast") == 6
    assert moved(before, after, "folio_tokens_total", direction="input") == 5 * 120
    assert moved(before, after, "folio_tokens_total", direction="output") == 5 * 30
    assert moved(before, after, "folio_searches_total", outcome="ok") == 2
    assert moved(before, after, "folio_search_seconds_count") == 2
    assert moved(before, after, "folio_citations_removed_total") == 1
    assert (
        moved(
            before,
            after,
            "folio_slack_api_errors_total",
            method="assistant.threads.setStatus",
            error="not_allowed_token_type",
        )
        == 1
    )
    assert moved(before, after, "folio_duplicate_deliveries_total", kind="message") == 1
    assert moved(before, after, "folio_lock_wait_seconds_count") == 3
    assert ("folio_turns_waiting_for_admission", frozenset()) in after


@pytest.fixture
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_socket_mode_serves_metrics_and_health_on_folio_metrics_port(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    free_port: int,
) -> None:
    (tmp_path / "channels.yaml").write_text("channels:\n  C0SAMPLE01:\n    container: sample\n")
    for name, value in {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_APP_TOKEN": slack.app_token,
        "SLACK_API_URL": slack.base_url,
        "REDIS_URL": redis_url,
        "FOLIO_METRICS_PORT": str(free_port),
        "FOLIO_DATA_DIR": str(tmp_path / "data"),
    }.items():
        monkeypatch.setenv(name, value)
    with FakeSocketMode(slack) as socket_mode:
        stop = asyncio.Event()
        server = asyncio.create_task(serve(load_settings(None), host="127.0.0.1", hooks=ServeHooks(stop=stop)))
        await wait_until(lambda: socket_mode.connected or server.done())
        event = {
            "type": "app_mention",
            "user": "U0ALICE01",
            "text": f"<@{BOT_USER}> refund policy?",
            "ts": "1800.000009",
            "channel": "C0SAMPLE01",
            "event_ts": "1800.000009",
        }
        await asyncio.to_thread(socket_mode.send_event, event)
        await wait_until(lambda: slack.thread("C0SAMPLE01", "1800.000009"))
        async with aiohttp.ClientSession() as http:
            base = f"http://127.0.0.1:{free_port}"
            samples = await scrape(http, f"{base}/metrics")
            async with http.get(f"{base}/readyz") as ready, http.get(f"{base}/healthz") as alive:
                statuses = (ready.status, await ready.text(), alive.status)
        stop.set()
        assert await server == 0

    assert statuses == (200, "ready", 200)
    assert samples[("folio_turns_total", frozenset({("outcome", "search_only"), ("profile", "fast")}))] >= 1


@pytest.mark.slow  # starts a process
def test_several_processes_add_up_in_multiprocess_mode(tmp_path: Path) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    count = "from bot import metrics; metrics.duplicate_dropped('message')"
    show = "from bot import metrics; print(metrics.exposition()[0].decode())"
    for _ in range(2):  # two workers, each dropping one duplicate
        subprocess.run([sys.executable, "-c", count], env=env, cwd=ROOT, check=True, timeout=60)

    shown = subprocess.run(
        [sys.executable, "-c", show], env=env, cwd=ROOT, check=True, timeout=60, capture_output=True, text=True
    ).stdout

    assert parse(shown)[("folio_duplicate_deliveries_total", frozenset({("kind", "message")}))] == 2
