"""Answers with tables: Slack's `markdown` block (tables render) instead of mrkdwn pipes, citations still links, and
in streams a table arrives whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.tables import TableHold, has_table
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL, Harness

TABLE = (
    "The plans compare like this:\n\n"
    "| Plan | Deductible |\n"
    "| --- | --- |\n"
    "| Basic | $1,500 [S1] |\n"
    "| Plus | $500 |\n\n"
    "Both cover emergencies."
)


def table_script() -> tuple:
    return tools(search("plan deductible")), reply(TABLE)


async def test_a_table_answer_is_a_markdown_block_with_checked_citation_links(harness: Harness) -> None:
    harness.model.script(*table_script())

    ts = await harness.mention("How do the plans compare?")
    await harness.settle()

    [message] = [m for m in harness.slack.thread(CHANNEL, ts) if m.ts != ts]
    [block] = [block for block in message.blocks if block["type"] == "markdown"]
    assert "| Plan | Deductible |\n| --- | --- |\n| Basic | $1,500 [[1]](https://docs.example/" in block["text"]
    assert "#page=" in block["text"] and "Both cover emergencies." in block["text"]
    assert message.text.startswith("The plans compare like this:")  # the plain-text fallback for notifications
    assert not any(b["type"] == "section" and "| Plan" in b["text"]["text"] for b in message.blocks)


ROWS = [f"| Plan {n} | ${n}00, after which the plan pays 80% of in-network care |\n" for n in range(12)]
LONG_TABLE = ["A long comparison:\n\n", "| Plan | Deductible |\n", "| --- | --- |\n", *ROWS, "\nThat is all [S1]."]


async def test_a_streamed_table_is_never_seen_half_written(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    async with running_app(slack, fake_model, redis_url, corpus_index, streaming=True) as harness:
        harness.model.script(
            tools(search("plan deductible")), reply("".join(LONG_TABLE), tokens=LONG_TABLE, token_delay=0.05)
        )
        ts = await harness.mention("How do the plans compare?")
        await harness.settle()

        [message] = [m for m in slack.thread(CHANNEL, ts) if m.ts != ts]
        seen = [view.markdown for view in slack.views_of(CHANNEL, message.ts) if "| Plan" in view.markdown]
        assert seen and all("| Plan 11 |" in markdown for markdown in seen)
        assert any(
            "A long comparison" in view.markdown and "| Plan" not in view.markdown
            for view in slack.views_of(CHANNEL, message.ts)
        )  # the text before it did stream


async def test_the_fake_slack_refuses_a_markdown_block_over_its_limit() -> None:
    with FakeSlack() as slack:  # not the fixture: it checks every sent block with slack_sdk, and these are wrong
        await _refusals(slack)


async def _refusals(slack: FakeSlack) -> None:
    client = AsyncWebClient(token=slack.token, base_url=slack.base_url)
    too_long = [{"type": "markdown", "text": "x" * 12_001}]

    with pytest.raises(SlackApiError) as refused:
        await client.chat_postMessage(channel=CHANNEL, text="x", blocks=too_long)
    assert refused.value.response["error"] == "invalid_blocks"
    with pytest.raises(SlackApiError):
        await client.chat_postMessage(channel=CHANNEL, text="x", blocks=[{"type": "markdown", "text": "a", "x": 1}])
    ok = await client.chat_postMessage(channel=CHANNEL, text="x", blocks=[{"type": "markdown", "text": "| a |"}])
    assert ok["ok"]


def test_a_table_is_held_until_its_last_row() -> None:
    hold = TableHold()
    shown = [hold.feed(piece) for piece in ("Compare:\n\n| A |", " B |\n| --- | --- |\n", "| 1 | 2 |\n", "Done")]

    assert shown == ["Compare:\n\n", "", "", "| A | B |\n| --- | --- |\n| 1 | 2 |\nDone"]
    assert has_table(TABLE) and not has_table("a | b, not a table")
