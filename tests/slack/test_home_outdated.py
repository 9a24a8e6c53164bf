"""The admins' Home tab lists the documents people flagged as outdated, most flagged first, with the threads (issue 34
item 4): the same rule as `folio feedback --outdated`, for Folio's admins only, and within Slack's Home tab limits
whatever the documents are called and however many there are."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from bot.store.feedback import FeedbackRecord
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import TEAM, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ADMIN, BOB, CHANNEL, POLICY, Harness
from tests.slack.test_feedback import OUTDATED, answered_thread
from tests.slack.test_why import open_home

FLAGGED_HEAD = "Documents people flagged as outdated"


@pytest.fixture
async def app(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> AsyncIterator[Harness]:
    async with running_app(slack, fake_model, redis_url, corpus_index, policy={**POLICY, "admins": [ADMIN]}) as running:
        yield running


def sections(home: dict[str, Any]) -> list[str]:
    return [block["text"]["text"] for block in home["blocks"] if block["type"] == "section"]


def flagged(home: dict[str, Any]) -> list[dict[str, Any]]:
    """The Home tab's blocks after the flagged documents' heading."""
    texts = [block.get("text", {}).get("text", "") for block in home["blocks"]]
    [at] = [index for index, text in enumerate(texts) if FLAGGED_HEAD in text]
    return home["blocks"][at + 1 :]


async def test_an_admins_home_tab_lists_the_documents_flagged_outdated_with_their_threads(
    app: Harness, slack: FakeSlack
) -> None:
    ts, answer_ts = await answered_thread(app)
    await app.feedback("not_helpful", thread_ts=ts, message_ts=answer_ts)
    await app.settle()
    await app.submit(slack.modals[0], OUTDATED)
    await app.settle()
    cited = (await app.store.load(app.thread_key(ts))).turns[0].citations[0]

    home = await open_home(app, ADMIN)

    [entry, *_] = flagged(home)
    text = entry["text"]["text"]
    assert text.startswith(f"*1×* {cited.container}/{cited.file} (page {cited.page})")
    permalink = f"https://folio-test.slack.com/archives/{CHANNEL}/p{ts.replace('.', '')}"
    assert f"<#{CHANNEL}> <{permalink}|" in text and entry["text"]["verbatim"] is True
    assert "That changed in 2026." not in json.dumps(home)  # the comment is the thread's, not the tab's

    bobs = await open_home(app, BOB)  # not one of Folio's admins
    assert FLAGGED_HEAD not in json.dumps(bobs) and cited.file not in json.dumps(bobs)
    assert len(bobs["blocks"]) == 1


def record(*, file: str, channel: str, thread_ts: str, team: str = TEAM, user: str = "U0ALICE01") -> FeedbackRecord:
    return FeedbackRecord(
        at="2026-12-02T09:14:03+00:00",
        team=team,
        channel=channel,
        thread_ts=thread_ts,
        turn=0,
        user=user,
        rating="not_helpful",
        question="q",
        answer="a",
        citations=({"file": file, "page": 2, "title": file, "container": "benefits", "url": None},),
        reason="outdated",
        comment="<!channel> read <https://evil.example|this>",
    )


async def test_many_flagged_documents_with_hostile_names_stay_within_the_home_tabs_limits(app: Harness) -> None:
    hostile = "<!channel> <@U0BOB0001> <https://evil.example|open me> https://evil.example *&* " + "x" * 3000
    feedback = app.folio.stores.feedback  # type: ignore[union-attr]
    for number in range(300):  # one document flagged in 300 threads
        await feedback.save(record(file=hostile, channel=CHANNEL, thread_ts=f"1764665643.{number:06d}"))
    for number in range(150):  # 150 more documents flagged once
        await feedback.save(record(file=f"doc-{number}.pdf", channel=CHANNEL, thread_ts=f"1764665000.{number:06d}"))
    await feedback.save(record(file="forged.pdf", channel="C0X|<!here>", thread_ts="1.2>"))  # no link made of it
    await feedback.save(record(file="private.pdf", channel="D0ALICE001", thread_ts="1764665643.000001"))
    await feedback.save(record(file="elsewhere.pdf", channel=CHANNEL, thread_ts="1764665643.000001", team="T0OTHER01"))

    home = await open_home(app, ADMIN)

    assert len(home["blocks"]) <= 100
    for block in home["blocks"]:
        Block.parse(block).validate_json()  # slack_sdk's own checks: text lengths, fields
        assert len(block.get("text", {}).get("text", "")) <= 3000
    listed = flagged(home)
    assert len(listed) == 10 and listed[0]["text"]["text"].startswith("*300×* benefits/")
    top = listed[0]["text"]["text"]
    assert top.count("https://folio-test.slack.com/archives/") == 5 and "and 295 more" in top
    shown = json.dumps(home)
    for injected in ("<!channel>", "<!here>", "<@U0BOB0001>", "<https://evil.example", "C0X|"):
        assert injected not in shown
    assert "&lt;!channel&gt;" in top and "elsewhere.pdf" not in shown  # another workspace's flags are not this one's
