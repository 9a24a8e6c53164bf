"""Slack user group and channel membership, through the real AsyncWebClient against the fake Slack, cached in Redis.

A clock stands in for time, so a TTL passes without waiting. Slack's answers can switch an admin's rule on or off,
never add a container: hostile handles and user IDs coming back from Slack match nothing the policy did not name.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.access import Memberships, grant_for
from bot.app.builders import slack_client, slack_http_session
from bot.config import AccessRules, Settings
from bot.errors import AccessUnavailable
from tests.fakes.slack_api import TEAM, FakeSlack
from tests.slack.harness import Clock

ALICE, BOB = "U0ALICE01", "U0BOB0001"
RULES = AccessRules.model_validate({"groups": {"finance-team": ["finance"], "S0LEGAL01": ["legal"]}})


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def memberships(slack: FakeSlack, redis: Redis, clock: Clock) -> Memberships:
    client = AsyncWebClient(token=slack.token, base_url=slack.base_url)
    return Memberships(redis, client, prefix=f"test-{uuid.uuid4().hex[:8]}:access", ttl=60, clock=clock)


async def groups(memberships: Memberships, user: str) -> frozenset[str]:
    return await memberships.groups_of(TEAM, user, list(RULES.groups))


async def test_handles_and_ids_both_name_groups(slack: FakeSlack, memberships: Memberships) -> None:
    slack.add_usergroup("S0FIN0001", "finance-team", [ALICE])
    slack.add_usergroup("S0LEGAL01", "legal-team", [ALICE, BOB])

    assert await groups(memberships, ALICE) == {"finance-team", "S0LEGAL01"}
    assert await groups(memberships, BOB) == {"S0LEGAL01"}


async def test_answers_are_cached_for_the_ttl_then_asked_again(
    slack: FakeSlack, memberships: Memberships, clock: Clock
) -> None:
    slack.add_usergroup("S0FIN0001", "finance-team", [])
    assert await groups(memberships, ALICE) == set()
    slack.usergroups["S0FIN0001"].users.append(ALICE)

    clock.now += 59
    assert await groups(memberships, ALICE) == set()
    clock.now += 2
    assert await groups(memberships, ALICE) == {"finance-team"}
    assert len(slack.calls_of("usergroups.list")) == 2


async def test_a_removal_event_applies_at_once_even_when_slack_cannot_be_asked(
    slack: FakeSlack, memberships: Memberships
) -> None:
    slack.add_usergroup("S0FIN0001", "finance-team", [ALICE, BOB])
    assert await groups(memberships, ALICE) == {"finance-team"}
    slack.fail("usergroups.users.list", "service_unavailable", status=503)

    await memberships.refresh_group(TEAM, "S0FIN0001", removed=[ALICE])

    assert await groups(memberships, ALICE) == set() and await groups(memberships, BOB) == {"finance-team"}


async def test_slack_down_uses_the_last_answer_and_with_none_refuses(
    slack: FakeSlack, memberships: Memberships, clock: Clock
) -> None:
    slack.add_usergroup("S0FIN0001", "finance-team", [ALICE])
    slack.fail("usergroups.list", "service_unavailable", status=503)
    with pytest.raises(AccessUnavailable):
        await groups(memberships, ALICE)

    assert await groups(memberships, ALICE) == {"finance-team"}  # Slack answers again
    clock.now += 3600
    slack.usergroups["S0FIN0001"].users.remove(ALICE)
    slack.fail("usergroups.list", "ratelimited", status=429)  # no retry handler on this client: unreachable
    slack.fail("usergroups.users.list", "service_unavailable", status=503, times=2)  # both groups
    assert await groups(memberships, ALICE) == {"finance-team"}  # the answer of an hour ago
    clock.now += 24 * 3600
    await memberships.members(TEAM, "S0FIN0001")  # Slack answers again, and the removal shows
    assert await groups(memberships, ALICE) == set()


async def test_a_group_slack_does_not_know_gives_nobody_anything(slack: FakeSlack, memberships: Memberships) -> None:
    slack.add_usergroup("S0OTHER01", "finance-tem", [ALICE])  # a typo on one side

    assert await memberships.group_ids(TEAM, ["finance-team", "S0LEGAL01"]) == {
        "finance-team": None,
        "S0LEGAL01": "S0LEGAL01",
    }
    assert await groups(memberships, ALICE) == set()  # S0LEGAL01: no_such_subteam, an answer, not an outage


@pytest.mark.parametrize(
    ("handle", "users"),
    [
        ("finance-team' or 1 eq 1", [f"{ALICE}' or ''='"]),
        ("*", ["*"]),
        ("finance-team ", [ALICE.lower(), f" {ALICE}"]),
        ("FINANCE-TEAM", ["U0ALICE01|U0BOB0001"]),
    ],
)
async def test_hostile_answers_from_slack_never_widen(
    slack: FakeSlack, memberships: Memberships, handle: str, users: list[str]
) -> None:
    slack.add_usergroup("S0EVIL001", handle, users)
    slack.add_usergroup("S0FIN0001", "finance-team", [BOB])

    member_of = await groups(memberships, ALICE)

    assert member_of == set()
    assert grant_for(RULES, user=ALICE, groups=member_of).containers == ()


async def test_channel_membership_reads_every_page_and_defaults_to_not_a_member(
    slack: FakeSlack, memberships: Memberships
) -> None:
    slack.channel_members["C0FINANCE1"] = [f"U0P{n:06d}" for n in range(2500)] + [ALICE]

    assert await memberships.in_channel(TEAM, "C0FINANCE1", ALICE)
    assert len(slack.calls_of("conversations.members")) == 3
    assert not await memberships.in_channel(TEAM, "C0FINANCE1", BOB)
    assert not await memberships.in_channel(TEAM, "C0UNKNOWN1", ALICE)  # channel_not_found: not a member


async def test_a_rate_limited_lookup_does_not_keep_the_person_waiting_for_retry_after(
    slack: FakeSlack, redis: Redis, clock: Clock
) -> None:
    """The production client waits out Retry-After (up to three times, often a minute each) before it answers; the
    person's turn shows nothing meanwhile. A lookup gives up after a few seconds: the cached answer, or a refusal."""
    settings = Settings(slack_bot_token="xoxb-test-token", slack_api_url=slack.base_url)
    session = slack_http_session()
    memberships = Memberships(
        redis,
        slack_client(settings, session),
        prefix=f"test-{uuid.uuid4().hex[:8]}:access",
        ttl=60,
        clock=clock,
        patience=0.5,
    )
    try:
        slack.add_usergroup("S0FIN0001", "finance-team", [ALICE])
        assert await groups(memberships, ALICE) == {"finance-team"}
        clock.now += 61
        for method in ("usergroups.list", "usergroups.users.list"):
            slack.rate_limit(method, retry_after=30, times=4)

        started = time.monotonic()
        assert await groups(memberships, ALICE) == {"finance-team"}  # the answer of a minute ago
        with pytest.raises(AccessUnavailable):  # nothing cached for this workspace: refused, promptly too
            await memberships.groups_of("T0OTHER01", ALICE, list(RULES.groups))

        assert time.monotonic() - started < 5
    finally:
        await session.close()


async def test_events_about_groups_nobody_looked_up_cost_no_slack_call(
    slack: FakeSlack, memberships: Memberships
) -> None:
    """Every subteam event fetched that group's members, whether or not the policy names it: a directory sync
    touching hundreds of groups spent usergroups.users.list's rate limit (Tier 2, ~20 a minute) on groups no rule
    reads, and the lookups turns need were then refused or stale."""
    slack.add_usergroup("S0FIN0001", "finance-team", [ALICE])
    for n in range(30):
        slack.add_usergroup(f"S0SYNC{n:03d}", f"sync-{n}", [BOB])
    assert await groups(memberships, ALICE) == {"finance-team"}
    asked = len(slack.calls_of("usergroups.users.list"))

    for n in range(30):
        await memberships.refresh_group(TEAM, f"S0SYNC{n:03d}")
    slack.usergroups["S0FIN0001"].users.remove(ALICE)
    await memberships.refresh_group(TEAM, "S0FIN0001")

    assert len(slack.calls_of("usergroups.users.list")) == asked + 1  # only the group a lookup cached
    assert await groups(memberships, ALICE) == set()


# Issue 18, item 3: a repeated cursor kept a turn calling Slack until its timeout (and the greeting for ever), and a
# `members` string was matched as a substring and cached as membership.
HOSTILE_MEMBERS = {
    "a cursor that repeats": lambda params, answer: {
        "ok": True,
        "members": ["U0P000001"],
        "response_metadata": {"next_cursor": "5"},
    },
    "a cursor that never ends": lambda params, answer: {
        "ok": True,
        "members": ["U0P000001"],
        "response_metadata": {"next_cursor": f"{params.get('cursor')}1"},
    },
    "members as a string": lambda params, answer: {**answer, "members": f"U0P000001,{ALICE}"},
    "members holding an object": lambda params, answer: {**answer, "members": [{"id": ALICE}]},
}


@pytest.mark.parametrize("hostile", HOSTILE_MEMBERS.values(), ids=HOSTILE_MEMBERS.keys())
async def test_a_hostile_channel_member_list_ends_promptly_as_not_a_member_and_is_not_cached(
    slack: FakeSlack, memberships: Memberships, hostile, caplog: pytest.LogCaptureFixture
) -> None:
    slack.channel_members["C0FINANCE1"] = ["U0P000001"]
    slack.hostile["conversations.members"] = hostile

    assert not await memberships.in_channel(TEAM, "C0FINANCE1", ALICE)

    assert len(slack.calls_of("conversations.members")) <= 100  # a page cap, not the turn's timeout
    assert "conversations.members" in caplog.text  # named in the log
    del slack.hostile["conversations.members"]
    slack.channel_members["C0FINANCE1"].append(ALICE)
    assert await memberships.in_channel(TEAM, "C0FINANCE1", ALICE)  # nothing was cached: Slack is asked again


async def test_a_group_member_list_that_is_not_a_list_is_refused_and_not_cached(
    slack: FakeSlack, memberships: Memberships
) -> None:
    slack.add_usergroup("S0FIN0001", "finance-team", [ALICE])
    slack.hostile["usergroups.users.list"] = lambda params, answer: {**answer, "users": ALICE}

    with pytest.raises(AccessUnavailable):
        await groups(memberships, ALICE)

    del slack.hostile["usergroups.users.list"]
    assert await groups(memberships, ALICE) == {"finance-team"}


async def test_who_can_read_a_conversation_public_channels_everyone_else_members_only(
    slack: FakeSlack, memberships: Memberships
) -> None:
    """What an admin's "Why this answer?" shows the words of: what they could read in Slack themselves."""
    slack.private_channels.add("C0PAYROLL1")  # Slack gives new private channels C ids: conversations.info says so
    slack.share_channel("C0PARTNER1")  # public on our side, but shared with another organisation
    for channel in ("C0PAYROLL1", "C0PARTNER1", "G0PRIVATE1"):
        slack.channel_members[channel] = [ALICE]

    assert await memberships.can_read(TEAM, "C0BENEFIT1", BOB)  # public: no member list asked
    assert slack.calls_of("conversations.members") == []
    for channel in ("C0PAYROLL1", "C0PARTNER1", "G0PRIVATE1"):  # G: an older private channel or a group DM
        assert await memberships.can_read(TEAM, channel, ALICE) and not await memberships.can_read(TEAM, channel, BOB)
    slack.hostile["conversations.info"] = lambda params, answer: {**answer, "channel": {"id": params["channel"]}}
    slack.channel_members["C0NOFLAGS1"] = [ALICE]
    assert not await memberships.can_read(TEAM, "C0NOFLAGS1", BOB)  # not said to be public: members only


@pytest.mark.parametrize(
    "broken",
    [
        lambda slack: slack.fail("conversations.info", times=5),
        lambda slack: slack.fail("conversations.members", times=5),
        lambda slack: slack.hostile.update({"conversations.info": lambda params, answer: {"ok": True}}),
        lambda slack: slack.hostile.update(
            {"conversations.members": lambda params, answer: {**answer, "members": BOB}}
        ),
    ],
    ids=["info fails", "members fails", "info without channel", "members not a list"],
)
async def test_when_slack_cannot_say_who_can_read_a_conversation_nobody_is_let_in(
    slack: FakeSlack, memberships: Memberships, broken
) -> None:
    slack.private_channels.add("C0PAYROLL1")
    slack.channel_members["C0PAYROLL1"] = [ALICE]
    broken(slack)

    with pytest.raises(AccessUnavailable):
        await memberships.can_read(TEAM, "C0PAYROLL1", BOB)
