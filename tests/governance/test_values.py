"""The pure parts of governance: the price table, thread links for `folio trace`, the refusal sentences."""

from __future__ import annotations

import pytest

from bot import messages
from bot.cli.trace import thread_of
from bot.config import load_settings
from bot.config.prices import PriceTable, parse_prices
from bot.errors import ConfigurationError, InvalidInput
from bot.turns.budget import until_midnight


def test_a_price_applies_to_every_model_or_to_the_one_named() -> None:
    assert parse_prices("0.25") == {"*": 0.25}
    table = PriceTable(
        input=parse_prices("gpt-5-mini=0.25, gpt-5=1.25"),
        output=parse_prices("gpt-5-mini=2"),
        cached=parse_prices("gpt-5-mini=0.025"),
    )
    cost = table.cost("gpt-5-mini", input_tokens=1_000_000, cached_tokens=400_000, output_tokens=500_000)
    assert cost == pytest.approx(0.6 * 0.25 + 0.4 * 0.025 + 0.5 * 2)
    assert table.cost("gpt-5", input_tokens=1, cached_tokens=0, output_tokens=1) is None  # no output price: no guess


def test_a_wrong_price_stops_folio_at_start_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLIO_PRICE_PER_MTOK_OUT", "gpt-5=cheap")
    with pytest.raises(ConfigurationError) as raised:
        load_settings(None)
    assert "FOLIO_PRICE_PER_MTOK_OUT" in str(raised.value) and "'gpt-5=cheap' is not a price" in str(raised.value)


def test_a_thread_is_found_from_its_link_a_replys_link_or_its_ts() -> None:
    link = "https://acme.slack.com/archives/C0123ABCD/p1700000000123456"
    assert thread_of(link) == ("C0123ABCD", "1700000000.123456")
    reply = "https://acme.slack.com/archives/C0123ABCD/p1700000099000001?thread_ts=1700000000.123456&cid=C0123ABCD"
    assert thread_of(reply) == ("C0123ABCD", "1700000000.123456")
    assert thread_of("1700000000.123456") == (None, "1700000000.123456")
    with pytest.raises(InvalidInput):
        thread_of("yesterday's thread")


def test_the_refusals_name_the_limit_and_when_it_resets() -> None:
    assert until_midnight(1_800_000_000.0 - 1_800_000_000 % 86400 + 86400 - 90) == 90
    assert messages.over_budget("channel", 200_000, resets_in=3 * 3600 + 12 * 60) == (
        "This channel has used today's Folio budget of 200,000 tokens, so I will not start on this question. "
        "The budget resets at midnight UTC (in 3 h 12 min); an admin can raise it."
    )
    assert messages.too_many_questions(1, retry_in=12.4) == (
        "You are asking faster than one question a minute, so I will not start on this one. Ask again in 12 s."
    )


def test_admins_are_user_ids_or_user_groups(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from bot.config import load_policy

    path = tmp_path / "channels.yaml"
    path.write_text("admins: [U0ADMIN01, it-admins, S0LEGAL01]\n")
    assert load_policy(path).admins == ("U0ADMIN01", "it-admins", "S0LEGAL01")
    path.write_text("admins: [U0ADMIN01, Bob Smith]\n")
    with pytest.raises(ConfigurationError, match="line 1: admins.1: .*'Bob Smith' is not a Slack user group"):
        load_policy(path)
