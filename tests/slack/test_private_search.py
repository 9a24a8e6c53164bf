""" "Search what only I can see": under a channel answer, a person whose own access reaches more than the channel's
rule is offered (only them) a private answer, given in their DM with Folio, from the channel's scope and theirs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.slack.render import ACTION_DELETE, ACTION_PRIVATE
from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import TEAM, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, BOB, CHANNEL, Clock, Harness
from tests.slack.test_access import FIN_CHANNEL, FINANCE_GROUP, POLICY, QUESTION, finance_seen, searching_model

OFFER = "You may read more than this channel searches. I can answer this privately, in our direct messages."


@pytest.fixture
def clock() -> Clock:
    """What cached memberships age by (FOLIO_ACCESS_TTL is 300 s here)."""
    return Clock()


@pytest.fixture
async def app(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path, clock: Clock
) -> AsyncIterator[Harness]:
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])
    fake_model.respond_with(searching_model)
    async with running_app(slack, fake_model, redis_url, access_index, policy=POLICY, clock=clock) as running:
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


# --- the button's value is a claim, checked on every click ------------------------------------------------------
REFUSED = "This private answer is only for the person who asked"


def dms_to(harness: Harness, user: str) -> list[dict]:
    """What Folio posted into `user`'s DM with it (the fake's DM of U0BOB0001 is D0BOB0001)."""
    return [call for call in harness.slack.calls_of("chat.postMessage") if call["channel"] == "D" + user[1:]]


async def alice_asks_in_finance(harness: Harness) -> str:
    harness.slack.channel_members[FIN_CHANNEL] = [ALICE]
    harness.slack.private_channels.add(FIN_CHANNEL)
    ts = await harness.mention(QUESTION, user=ALICE, channel=FIN_CHANNEL)
    await harness.settle()
    return ts


async def test_a_forged_value_naming_another_persons_thread_is_refused(app: Harness) -> None:
    ts = await alice_asks_in_finance(app)
    asked, searched = len(app.model.requests), len(app.retriever.scopes)
    forged = json.dumps({"thread": [TEAM, FIN_CHANNEL, ts], "turn": 0})

    await app.private_click(forged, user=BOB)  # Bob: not in #finance, not the asker; clicked in a channel of his
    await app.settle()

    assert dms_to(app, BOB) == []  # nothing posted into his DM
    assert len(app.model.requests) == asked and len(app.retriever.scopes) == searched  # nothing searched
    [told] = app.ephemeral(BOB)
    assert told.startswith(REFUSED)
    [call] = [c for c in app.slack.calls_of("chat.postEphemeral") if c.get("user") == BOB]
    assert call["channel"] == CHANNEL  # told where he clicked, not in #finance


async def test_the_asker_who_left_the_channel_is_refused(app: Harness, clock: Clock) -> None:
    ts = await alice_asks_in_finance(app)
    app.slack.channel_members[FIN_CHANNEL] = []  # she left #finance; the cached membership ages out
    clock.now += 301
    asked = len(app.model.requests)

    await app.private_click(json.dumps({"thread": [TEAM, FIN_CHANNEL, ts], "turn": 0}), user=ALICE, channel=FIN_CHANNEL)
    await app.settle()

    assert dms_to(app, ALICE) == [] and len(app.model.requests) == asked
    assert app.ephemeral(ALICE)[-1].startswith(REFUSED)


async def test_another_member_cannot_take_the_askers_private_answer(app: Harness) -> None:
    ts = await app.mention(QUESTION, user=BOB)  # both may read this channel; Bob asked
    await app.settle()
    asked = len(app.model.requests)

    await app.private_click(json.dumps({"thread": [TEAM, CHANNEL, ts], "turn": 0}), user=ALICE)
    await app.settle()

    assert dms_to(app, ALICE) == [] and len(app.model.requests) == asked
    assert app.ephemeral(ALICE)[-1].startswith(REFUSED)


@pytest.mark.parametrize(
    "value",
    [
        "not json",
        "[]",
        '{"thread": "x", "turn": 0}',
        '{"thread": [1, 2], "turn": 0}',
        '{"thread": ["T", "C", "1.2"], "turn": "zero"}',
    ],
)
async def test_a_malformed_value_is_refused_visibly(app: Harness, value: str) -> None:
    await app.private_click(value, user=BOB)
    await app.settle()
    assert dms_to(app, BOB) == [] and app.ephemeral(BOB)[-1].startswith(REFUSED)


async def test_deleting_the_private_answer_deletes_the_message_quoting_the_question(app: Harness) -> None:
    await app.mention(QUESTION, user=ALICE)
    await app.settle()
    [offer] = offers(app, ALICE)
    [button] = [e for block in offer["blocks"] if block["type"] == "actions" for e in block["elements"]]
    await app.private_click(button["value"], user=ALICE)
    await app.settle()
    [dm] = {call["channel"] for call in dms_to(app, ALICE)}
    root, answer = [m for m in app.slack.messages.values() if m.channel == dm]

    await app.click(ACTION_DELETE, thread_ts=root.ts, message_ts=answer.ts, user=ALICE, channel=dm)
    await app.settle()

    assert [m for m in app.slack.messages.values() if m.channel == dm] == []  # the quoted question is gone too
