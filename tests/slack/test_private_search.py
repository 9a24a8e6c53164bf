""" "Search what only I can see": under a channel answer, a person whose own access reaches more than the channel's
rule is offered (only them) a private answer, given in their DM with Folio, from the channel's scope and theirs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.slack.render import ACTION_PRIVATE
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, BOB, CHANNEL, Harness
from tests.slack.test_access import FINANCE_GROUP, POLICY, QUESTION, finance_seen, searching_model

OFFER = "You may read more than this channel searches. I can answer this privately, in our direct messages."


@pytest.fixture
async def app(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> AsyncIterator[Harness]:
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])
    fake_model.respond_with(searching_model)
    async with running_app(slack, fake_model, redis_url, access_index, policy=POLICY) as running:
        yield running


def offers(harness: Harness, user: str) -> list[dict]:
    return [call for call in harness.slack.calls_of("chat.postEphemeral") if call.get("user") == user]


async def test_the_offer_is_shown_only_to_a_person_whose_access_is_wider(app: Harness) -> None:
    await app.mention(QUESTION, user=BOB)  # Bob may read the handbook only: what the channel searches
    await app.mention(QUESTION, user=ALICE)  # Alice may read finance too
    await app.settle()

    assert offers(app, BOB) == []
    [offer] = offers(app, ALICE)
    assert offer["text"] == OFFER and "finance" not in json.dumps(offer)  # says nothing of what else there is
    [button] = [e for block in offer["blocks"] if block["type"] == "actions" for e in block["elements"]]
    assert button["action_id"] == ACTION_PRIVATE


async def test_the_private_answer_goes_to_the_dm_only_with_passages_the_channel_could_not_see(app: Harness) -> None:
    ts = await app.mention(QUESTION, user=ALICE)
    await app.settle()
    assert finance_seen(app) == []
    channel_messages = len(app.slack.thread(CHANNEL, ts))
    [offer] = offers(app, ALICE)
    [button] = [e for block in offer["blocks"] if block["type"] == "actions" for e in block["elements"]]
    asked = len(app.model.requests)

    await app.private_click(button["value"], user=ALICE)
    await app.settle()

    assert len(app.slack.thread(CHANNEL, ts)) == channel_messages  # nothing more in the channel
    [dm] = {call["channel"] for call in app.slack.calls_of("chat.postMessage") if call["channel"].startswith("D")}
    root, answer = [m for m in app.slack.messages.values() if m.channel == dm]
    assert "https://folio-test.slack.com/archives/" in root.text and QUESTION in root.text
    assert answer.thread_ts == root.ts and "Here is what I found" in app.texts(root.ts, channel=dm)[-1]
    assert set(app.retriever.scopes[-1].containers) == {"finance", "handbook"}
    assert finance_seen(app, since=asked) != []
