"""Access per person: a DM searches what the person asking may read, from Slack user groups, on every turn.

The fake Slack serves the user groups and their members; the fake model searches whatever the question says and
cites what it was shown, so what reached the model and the thread is exactly what the scope let through.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot import messages
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, search, shown_sources, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, BOB, CHANNEL, Clock, Harness

FINANCE_GROUP = "S0FIN0001"
FIN_CHANNEL = "C0FINANCE1"
ALICE_DM, BOB_DM = "D0ALICE001", "D0BOB00001"
POLICY = {
    "tag_keys": ["department", "year"],
    "channels": {CHANNEL: {"container": "handbook"}, FIN_CHANNEL: {"container": "finance"}},
    "access": {"groups": {"finance-team": ["finance"]}, "default": ["handbook"]},
}
QUESTION = "What is the refund window for annual plans?"
FINANCE_FILES = ("refund_policy", "supplier_contract", "expenses")


def searching_model(request: Request) -> Step:
    """Search for the question; then answer citing the first source shown, or say the documents do not answer."""
    if not request.tool_outputs:
        return tools(search(request.user_text))
    refs = [source["ref"] for output in request.tool_outputs.values() for source in shown_sources(output)]
    return reply(f"Here is what I found [{refs[0]}]." if refs else "[NOT_IN_DOCUMENTS]")


@pytest.fixture
async def app(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> AsyncIterator[Harness]:
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])
    fake_model.respond_with(searching_model)
    async with running_app(slack, fake_model, redis_url, access_index, policy=POLICY) as running:
        yield running


async def ask_in_dm(harness: Harness, text: str, *, user: str, channel: str, thread_ts: str | None = None) -> str:
    ts = await harness.message(text, channel=channel, channel_type="im", user=user, thread_ts=thread_ts)
    await harness.settle()
    return ts


def finance_seen(harness: Harness, *, since: int = 0) -> list[str]:
    """Finance passages in what the model was sent (from request `since` on)."""
    sent = [out for request in harness.model.requests[since:] for out in request.tool_outputs.values()]
    shown = [source for out in sent for source in shown_sources(out)]
    return [
        source["title"]
        for source in shown
        if source["container"] == "finance" or any(name in source["title"] for name in FINANCE_FILES)
    ]


async def test_a_finance_member_gets_finance_documents_in_a_dm_and_a_non_member_does_not(app: Harness) -> None:
    ts = await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM)
    [answer] = app.texts(ts, ALICE_DM)
    assert app.retriever.scopes[-1].containers == ("finance", "handbook")
    assert "refund_policy" in answer and "Searched *finance, handbook* (what you may read)" in answer
    assert finance_seen(app)
    sent_to_alice = len(app.model.requests)

    ts = await ask_in_dm(app, QUESTION, user=BOB, channel=BOB_DM)

    [answer] = app.texts(ts, BOB_DM)
    assert {scope.containers for scope in app.retriever.scopes[1:]} == {("handbook",)}
    assert not any(name in answer for name in FINANCE_FILES) and "finance" not in answer
    assert finance_seen(app, since=sent_to_alice) == []
    assert "Searched *handbook* (what you may read)" in answer


async def test_channels_keep_their_rule_whoever_asks(app: Harness) -> None:
    ts = await app.mention(QUESTION, user=ALICE)  # Alice may read finance, but this channel searches the handbook
    await app.settle()

    assert [scope.containers for scope in app.retriever.scopes] == [("handbook",)]
    assert "Searched *handbook* · Applied filters" in app.texts(ts)[0]


async def test_a_follow_up_is_answered_with_the_askers_scope_of_that_turn(app: Harness) -> None:
    ts = await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM)
    app.slack.usergroups[FINANCE_GROUP].users.remove(ALICE)
    event = {
        "type": "subteam_members_changed",
        "subteam_id": FINANCE_GROUP,
        "team_id": "T0FOLIO01",
        "added_users": [],
        "removed_users": [ALICE],
        "ts": "1800000000.000001",
    }
    await app.event(event)
    await app.settle()
    before = len(app.model.requests)

    await ask_in_dm(app, "And for monthly plans?", user=ALICE, channel=ALICE_DM, thread_ts=ts)

    assert app.retriever.scopes[-1].containers == ("handbook",)
    assert finance_seen(app, since=before) == []
    assert "Searched *handbook* (what you may read)" in app.texts(ts, ALICE_DM)[-1]


async def test_a_membership_change_takes_effect_within_the_ttl(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> None:
    fake_model.respond_with(searching_model)
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [])
    clock = Clock()
    async with running_app(slack, fake_model, redis_url, access_index, policy=POLICY, access_ttl=1, clock=clock) as app:
        await ask_in_dm(app, QUESTION, user=BOB, channel=BOB_DM)
        slack.usergroups[FINANCE_GROUP].users.append(BOB)
        await ask_in_dm(app, QUESTION, user=BOB, channel=BOB_DM)  # within the TTL: the cached answer holds
        clock.now += 1.1
        await ask_in_dm(app, QUESTION, user=BOB, channel=BOB_DM)

        assert [scope.containers for scope in app.retriever.scopes] == [
            ("handbook",),
            ("handbook",),
            ("finance", "handbook"),
        ]
        assert len(slack.calls_of("usergroups.users.list")) == 2  # replicas share the cache in Redis


async def test_slack_unreachable_with_an_empty_cache_refuses(app: Harness) -> None:
    for method in ("usergroups.list", "usergroups.users.list"):
        app.slack.fail(method, "service_unavailable", status=503, times=3)

    ts = await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM)

    assert app.texts(ts, ALICE_DM) == [messages.ACCESS_UNKNOWN]
    assert app.retriever.scopes == [] and app.model.requests == []


async def test_slack_unreachable_falls_back_to_the_cached_membership(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> None:
    fake_model.respond_with(searching_model)
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])
    clock = Clock()
    async with running_app(slack, fake_model, redis_url, access_index, policy=POLICY, access_ttl=1, clock=clock) as app:
        await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM)
        clock.now += 1.1
        for method in ("usergroups.list", "usergroups.users.list"):
            slack.fail(method, "service_unavailable", status=503, times=3)

        await ask_in_dm(app, QUESTION, user=ALICE, channel=ALICE_DM)

        assert [scope.containers for scope in app.retriever.scopes] == [("finance", "handbook")] * 2


async def test_without_an_access_section_dms_keep_the_dm_rule(harness: Harness) -> None:
    harness.model.respond_with(searching_model)

    ts = await ask_in_dm(harness, "What is covered for hearing aids?", user=ALICE, channel=ALICE_DM)

    assert [scope.containers for scope in harness.retriever.scopes] == [("benefits",)]
    assert "Searched *benefits* · Applied filters" in harness.texts(ts, ALICE_DM)[0]
    assert harness.slack.calls_of("usergroups.list") == [] and harness.slack.calls_of("usergroups.users.list") == []


async def test_someone_no_rule_covers_is_told_how_to_get_access(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> None:
    policy = {**POLICY, "access": {"groups": {"finance-team": ["finance"]}}}  # no default
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])
    async with running_app(slack, fake_model, redis_url, access_index, policy=policy) as app:
        ts = await ask_in_dm(app, QUESTION, user=BOB, channel=BOB_DM)

        assert app.texts(ts, BOB_DM) == [messages.NO_ACCESS] and app.model.requests == []


async def test_ask_access_shows_each_person_what_they_may_search(app: Harness) -> None:
    await app.command("access", channel=ALICE_DM, user=ALICE)
    await app.settle()
    await app.command("access", channel=CHANNEL, user=BOB)
    await app.settle()

    alice, bob = (call["text"] for call in app.slack.calls_of("response_url"))
    assert "*finance, handbook*" in alice and "group finance-team: finance" in alice and "default: handbook" in alice
    assert f"In <#{CHANNEL}> I search *handbook*." in bob and "*handbook* (default: handbook)" in bob
    assert all(call["response_type"] == "ephemeral" for call in app.slack.calls_of("response_url"))


async def test_ask_help_in_a_dm_names_the_askers_containers(app: Harness) -> None:
    await app.command("help", channel=ALICE_DM, user=ALICE)
    await app.settle()

    [help_text] = [call["text"] for call in app.slack.calls_of("response_url")]
    assert "Here I search *finance, handbook*" in help_text and "/ask" in help_text


async def test_ask_in_a_dm_restates_and_answers_with_the_askers_scope(app: Harness) -> None:
    status, _ = await app.command(f"year:2026 {QUESTION}", channel=ALICE_DM, user=ALICE)
    await app.settle()

    assert status == 200
    [scope] = app.retriever.scopes
    assert scope.containers == ("finance", "handbook") and [str(tag) for tag in scope.tags] == ["year:2026"]


async def test_a_dm_threads_filter_the_policy_no_longer_allows_is_dropped_not_refused_on_every_follow_up(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, access_index: Path
) -> None:
    """A channel thread drops a stored `/ask` filter whose key an admin removed from tag_keys; a DM thread under
    `access:` answered every later question with "`year` is not a filter here", though nobody typed it again."""
    fake_model.respond_with(searching_model)
    slack.add_usergroup(FINANCE_GROUP, "finance-team", [ALICE])
    prefix = f"slack-{uuid.uuid4().hex[:8]}"
    async with running_app(slack, fake_model, redis_url, access_index, policy=POLICY, prefix=prefix) as app:
        await app.command(f"year:2026 {QUESTION}", channel=ALICE_DM, user=ALICE)
        await app.settle()
    [root] = [m.ts for m in slack.messages.values() if m.channel == ALICE_DM and m.thread_ts is None]

    policy = {**POLICY, "tag_keys": ["department"]}
    async with running_app(slack, fake_model, redis_url, access_index, policy=policy, prefix=prefix) as app:
        await ask_in_dm(app, "And for monthly plans?", user=ALICE, channel=ALICE_DM, thread_ts=root)

        assert [scope.containers for scope in app.retriever.scopes] == [("finance", "handbook")]
        assert app.retriever.scopes[0].tags == ()
        assert messages.SCOPE_CHANGED in app.texts(root, ALICE_DM)[-1]


async def test_ask_access_in_a_channel_still_names_the_channels_documents_when_slack_cannot_say_the_rest(
    app: Harness,
) -> None:
    """The channel's rule needs no Slack lookup, but one failed user group lookup replaced the whole reply."""
    for method in ("usergroups.list", "usergroups.users.list"):
        app.slack.fail(method, "service_unavailable", status=503, times=3)

    await app.command("access", channel=CHANNEL, user=BOB)
    await app.settle()

    [said] = [call["text"] for call in app.slack.calls_of("response_url")]
    assert f"In <#{CHANNEL}> I search *handbook*." in said and messages.ACCESS_UNKNOWN in said
