"""A person of another organisation (Slack Connect) who opens Folio, or asks `/ask access` or `/ask help`, is told
nothing about the organisation's containers or its prompts: only what the policy lets them search, if anything."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.openai_responses import FakeResponses
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, CHANNEL, Harness, user_ts
from tests.slack.test_access import FINANCE_GROUP, POLICY, searching_model
from tests.slack.test_assistant import PROMPTS, open_assistant
from tests.slack.test_shared_channels import GUEST, OUTSIDER_REFUSAL

GUEST_DM = "D0GUEST001"
INTERNAL = ("handbook", "finance", "Refunds", "refund")  # container names and the policy's prompts


@pytest.fixture
async def app(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> AsyncIterator[Harness]:
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])
    slack.add_user(GUEST)  # users.info: their home workspace is the partner's
    slack.share_channel(CHANNEL)
    fake_model.respond_with(searching_model)
    async with running_app(
        slack, fake_model, redis_url, access_index, policy={**POLICY, "prompts": PROMPTS}
    ) as running:
        yield running


def says_nothing_internal(text: str) -> bool:
    return not any(word in text for word in INTERNAL)


async def test_an_outsider_opening_the_assistant_is_greeted_with_nothing_internal_and_no_prompts(app: Harness) -> None:
    thread_ts = await open_assistant(app, user=GUEST, channel=GUEST_DM, viewing=CHANNEL)
    await app.event({"type": "app_home_opened", "user": GUEST, "channel": GUEST_DM, "tab": "messages", "ts": user_ts()})
    await app.settle()

    [greeting] = app.texts(thread_ts, GUEST_DM)
    assert OUTSIDER_REFUSAL in greeting and says_nothing_internal(greeting)
    assert app.slack.calls_of("assistant.threads.setSuggestedPrompts") == []


async def test_an_insider_still_gets_the_greeting_and_prompts(app: Harness) -> None:
    thread_ts = await open_assistant(app, user=ALICE, channel="D0ALICE001", viewing=None)
    assert "*finance*, *handbook*" in app.texts(thread_ts, "D0ALICE001")[0]
    assert app.slack.calls_of("assistant.threads.setSuggestedPrompts") != []


@pytest.mark.parametrize(
    ("text", "channel"),
    [("access", GUEST_DM), ("access", CHANNEL), ("help", GUEST_DM), ("help", CHANNEL), ("", CHANNEL)],
)
async def test_ask_access_and_help_tell_an_outsider_nothing_internal(app: Harness, text: str, channel: str) -> None:
    _, body = await app.command(text, channel=channel, user=GUEST)
    await app.settle()

    said = [body, *(call["text"] for call in app.slack.calls_of("response_url"))]
    assert says_nothing_internal(json.dumps(said)) and OUTSIDER_REFUSAL in json.dumps(said)


async def test_an_outsiders_ask_in_a_dm_restates_nothing_naming_containers(app: Harness) -> None:
    await app.command("What is the refund window?", channel=GUEST_DM, user=GUEST)
    await app.settle()

    posted = [call["text"] + json.dumps(call.get("blocks")) for call in app.slack.calls_of("chat.postMessage")]
    assert not any("handbook" in text for text in posted) and app.model.requests == []
    assert OUTSIDER_REFUSAL in json.dumps([call["text"] for call in app.slack.calls_of("response_url")])


async def test_an_ask_in_a_channel_shared_outside_is_refused_before_its_restatement_names_the_container(
    app: Harness,
) -> None:
    await app.command("What is the refund window?", channel=CHANNEL, user=ALICE)  # CHANNEL is shared (fixture)
    await app.settle()

    assert app.slack.calls_of("chat.postMessage") == [] and app.model.requests == []
    [told] = [call["text"] for call in app.slack.calls_of("response_url")]
    assert told == "I don't answer in channels shared with people outside the organisation."


async def test_an_outsider_named_by_an_access_rule_hears_only_their_containers(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> None:
    slack.add_user(GUEST)
    policy = {**POLICY, "prompts": PROMPTS, "access": {**POLICY["access"], "users": {GUEST: ["benefits"]}}}
    async with running_app(slack, fake_model, redis_url, access_index, policy=policy) as app:
        await app.command("access", channel=GUEST_DM, user=GUEST)
        thread_ts = await open_assistant(app, user=GUEST, channel=GUEST_DM, viewing=None)
        await app.settle()

        [told] = [call["text"] for call in app.slack.calls_of("response_url")]
        assert "*benefits*" in told and says_nothing_internal(told)
        [greeting] = app.texts(thread_ts, GUEST_DM)
        assert "*benefits*" in greeting and says_nothing_internal(greeting)
        assert app.slack.calls_of("assistant.threads.setSuggestedPrompts") == []  # the policy's prompts are ours
