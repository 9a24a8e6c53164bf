"""Slack Connect: a channel shared with another organisation, and people of another organisation, get no answer from
internal documents unless the policy says so; Folio says so once and sends nothing to the model."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import PARTNER, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL, DM, Harness

SHARED_REFUSAL = "I don't answer in channels shared with people outside the organisation."
OUTSIDER_REFUSAL = "I only answer people of this organisation."
UNKNOWN_SHARING = (
    "I could not check with Slack whether this conversation is shared outside the organisation, so I have not "
    "answered. Please try again in a few minutes."
)
GUEST = "U0GUEST01"
PARTNER_CHANNEL = "C0PARTNER1"
POLICY = {
    "tag_keys": ["department", "year"],
    "channels": {
        CHANNEL: {"container": "benefits"},
        PARTNER_CHANNEL: {"container": "benefits", "external": "allow"},
    },
    "dm": {"container": "benefits"},
}


def answer_script() -> tuple:
    return tools(search("balance billing protection")), reply("You are protected [S1].")


async def test_a_mention_in_a_channel_shared_outside_the_organisation_is_refused_once(harness: Harness) -> None:
    harness.slack.share_channel(CHANNEL, with_team=PARTNER)

    ts = await harness.mention("What protection is there against balance billing?")
    await harness.settle()

    assert harness.texts(ts) == [SHARED_REFUSAL]
    assert harness.model.requests == [] and harness.retriever.scopes == []
    assert await harness.store.load(harness.thread_key(ts)) is None  # the thread is given back to people


async def test_a_channel_whose_rule_allows_external_people_is_answered_from_its_container(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    slack.share_channel(PARTNER_CHANNEL)
    slack.add_user(GUEST)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=POLICY) as harness:
        harness.model.script(*answer_script())
        ts = await harness.mention("What protection is there?", channel=PARTNER_CHANNEL, user=GUEST)
        await harness.settle()

        [answer] = harness.texts(ts, channel=PARTNER_CHANNEL)
        assert "You are protected" in answer
        assert {scope.containers for scope in harness.retriever.scopes} == {("benefits",)}


async def test_a_person_of_another_organisation_gets_no_passages_in_a_channel_or_a_dm(harness: Harness) -> None:
    harness.slack.add_user(GUEST)

    ts = await harness.mention("What protection is there against balance billing?", user=GUEST)
    dm = await harness.message(
        "What protection is there?", channel=DM, channel_type="im", user=GUEST, user_team=None
    )  # no team in the event: users.info says
    await harness.settle()

    assert [call["user"] for call in harness.slack.calls_of("users.info")] == [GUEST]
    assert harness.texts(ts) == [OUTSIDER_REFUSAL]
    assert harness.texts(dm, channel=DM) == [OUTSIDER_REFUSAL]
    assert harness.model.requests == [] and harness.retriever.scopes == []


async def test_the_event_saying_the_asker_is_of_another_team_needs_no_lookup(harness: Harness) -> None:
    ts = await harness.mention("What protection is there?", user="U0OTHER01", user_team=PARTNER)
    await harness.settle()

    assert harness.texts(ts) == [OUTSIDER_REFUSAL] and harness.model.requests == []


async def test_a_person_named_by_an_access_rule_gets_only_their_named_containers(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    slack.add_user(GUEST)
    policy = {
        "channels": {CHANNEL: {"container": "benefits"}},
        "access": {"users": {GUEST: ["benefits"]}, "default": ["handbook"]},
    }
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=policy) as harness:
        harness.model.script(*answer_script())
        dm = await harness.message("What protection is there?", channel=DM, channel_type="im", user=GUEST)
        await harness.settle()

        assert "You are protected" in harness.texts(dm, channel=DM)[0]
        assert {scope.containers for scope in harness.retriever.scopes} == {("benefits",)}  # not the default


async def test_a_sharing_lookup_that_fails_ends_in_a_message_and_no_answer(harness: Harness) -> None:
    harness.slack.fail("conversations.info", "internal_error")

    ts = await harness.mention("What protection is there against balance billing?")
    await harness.settle()

    assert harness.texts(ts) == [UNKNOWN_SHARING] and harness.model.requests == []


async def test_channel_shared_and_unshared_events_refresh_the_cached_answer(harness: Harness) -> None:
    harness.model.script(*answer_script())
    first = await harness.mention("What protection is there?")
    await harness.settle()
    assert "You are protected" in harness.texts(first)[0]

    harness.slack.share_channel(CHANNEL)
    await harness.event(
        {"type": "channel_shared", "connected_team_id": PARTNER, "channel": CHANNEL, "ts": "1800000000.000001"}
    )
    await harness.settle()
    second = await harness.mention("And out of network?")
    await harness.settle()
    assert harness.texts(second) == [SHARED_REFUSAL]

    harness.slack.shared_with.pop(CHANNEL)
    await harness.event(
        {
            "type": "channel_unshared",
            "previously_connected_team_id": PARTNER,
            "channel": CHANNEL,
            "is_ext_shared": False,
            "ts": "1800000000.000002",
        }
    )
    await harness.settle()
    harness.model.script(*answer_script())
    third = await harness.mention("What protection is there?")
    await harness.settle()
    assert "You are protected" in harness.texts(third)[0]


async def test_the_sharing_answer_is_cached(harness: Harness) -> None:
    harness.model.script(*answer_script(), reply("Yes [S1]."))
    ts = await harness.mention("What protection is there?")
    await harness.settle()
    await harness.message("Out of network too?", thread_ts=ts)
    await harness.settle()

    assert len(harness.texts(ts)) == 2 and len(harness.slack.calls_of("conversations.info")) == 1
    assert harness.slack.calls_of("users.info") == []  # the event named the asker's team: no lookup


async def test_a_streamed_turn_in_a_shared_channel_is_refused_before_the_model_too(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    slack.share_channel(CHANNEL)
    async with running_app(slack, fake_model, redis_url, corpus_index, streaming=True) as harness:
        ts = await harness.mention("What protection is there against balance billing?")
        await harness.settle()

        assert harness.texts(ts) == [SHARED_REFUSAL]
        assert harness.model.requests == [] and harness.retriever.scopes == []
