"""`folio access USER_ID` prints what that person may search in direct messages, and which rules said so."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from bot.cli import main
from tests.fakes.slack_api import FakeSlack

POLICY = """\
access:
  groups:
    finance-team: [finance]
    S0LEGAL01: [legal]
    finance-tem: [board]
  users:
    U0CFO0001: [board]
  default: [handbook]
"""


@pytest.fixture
def folio_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, slack: FakeSlack, redis_url: str) -> None:
    (tmp_path / "channels.yaml").write_text(POLICY)
    with redis.Redis.from_url(redis_url) as shared:  # the command keeps its cache under the default prefix
        for key in shared.scan_iter("folio:access:*"):
            shared.delete(key)
    for name, value in {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_API_URL": slack.base_url,
        "REDIS_URL": redis_url,
        "FOLIO_SAMPLE_CORPUS": "false",
        "FOLIO_DATA_DIR": str(tmp_path / "data"),
    }.items():
        monkeypatch.setenv(name, value)


def test_it_names_the_containers_and_each_rule_that_matched(
    folio_env: None, slack: FakeSlack, capsys: pytest.CaptureFixture[str]
) -> None:
    slack.add_usergroup("S0FIN0001", "finance-team", ["U0CFO0001"])
    slack.add_usergroup("S0LEGAL01", "legal", [])

    assert main(["access", "U0CFO0001"]) == 0

    assert capsys.readouterr().out.splitlines() == [
        "U0CFO0001 may search in direct messages: board, finance, handbook",
        "  matched      group finance-team: finance",
        "  matched      user U0CFO0001: board",
        "  matched      default: handbook",
        "  not matched  group S0LEGAL01 (not a member)",
        "  unknown      group finance-tem: Slack has no user group with this handle",
    ]


def test_slack_unreachable_with_nothing_cached_is_an_error_that_says_so(
    folio_env: None, slack: FakeSlack, capsys: pytest.CaptureFixture[str]
) -> None:
    slack.fail("usergroups.list", "service_unavailable", status=503, times=3)

    assert main(["access", "U0NEWUSER1"]) == 2
    assert "could not check your Slack user groups" in capsys.readouterr().err


@pytest.mark.parametrize("typed", ["@alice", "alice", "u0cfo0001", "<@U0CFO0001>", "U0CFO0001'"])
def test_something_that_is_not_a_user_id_is_refused_rather_than_given_the_default(
    folio_env: None, slack: FakeSlack, capsys: pytest.CaptureFixture[str], typed: str
) -> None:
    """Every string used to get a confident report ("may search: handbook", "not matched group finance-team (not a
    member)") for a person who does not exist, so an operator checking `@alice` concluded she is not in finance."""
    slack.add_usergroup("S0FIN0001", "finance-team", ["U0CFO0001"])

    assert main(["access", typed]) == 2

    captured = capsys.readouterr()
    assert captured.out == "" and "not a Slack user ID" in captured.err and "U0123ABCD" in captured.err
