from __future__ import annotations
import time
from tests.slack.test_membership import *  # noqa
from tests.slack.test_membership import ALICE, BOB, TEAM


async def test_big_channel(slack, memberships) -> None:
    slack.channel_members["C0GENERAL1"] = [f"U0P{n:06d}" for n in range(30000)] + [ALICE]
    t = time.monotonic()
    assert await memberships.in_channel(TEAM, "C0GENERAL1", ALICE)
    print("alice", time.monotonic() - t, len(slack.calls_of("conversations.members")))
    t = time.monotonic()
    assert not await memberships.in_channel(TEAM, "C0GENERAL1", BOB)
    print("bob", time.monotonic() - t, len(slack.calls_of("conversations.members")))
