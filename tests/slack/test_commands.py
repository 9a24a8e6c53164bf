"""`/ask` parsing: filters only from policy tag keys, a safe value alphabet, help, and the thorough flag."""

from __future__ import annotations

import pytest

from bot.errors import InvalidInput
from bot.models import Tag
from bot.slack.commands import clean_question, parse_ask

KEYS = ("department", "year")


def test_leading_filters_and_the_flag_are_read_and_the_rest_is_the_question() -> None:
    command = parse_ask("year:2025 Department=HR --thorough What changed in year:2024?", tag_keys=KEYS)

    assert command.tags == (Tag(key="year", value="2025"), Tag(key="department", value="HR"))
    assert command.thorough
    assert command.question == "What changed in year:2024?"


def test_a_key_outside_the_policy_is_part_of_the_question_not_a_filter() -> None:
    command = parse_ask("container:legal doc_type:contract What are the terms?", tag_keys=KEYS)

    assert command.tags == ()
    assert command.question == "container:legal doc_type:contract What are the terms?"


@pytest.mark.parametrize(
    "text",
    [
        "department:hr'or'1'eq'1 question",
        "year:2025)or(container:legal question",
        'department:"hr" question',
        "department:&lt;script&gt; question",
        "department: question",
    ],
)
def test_filter_values_outside_the_safe_alphabet_are_refused(text: str) -> None:
    with pytest.raises(InvalidInput, match="not a filter I can use"):
        parse_ask(text, tag_keys=KEYS)


@pytest.mark.parametrize("text", ["", "   ", "help", "HELP", "year:2025"])
def test_empty_and_help_ask_for_the_syntax(text: str) -> None:
    assert parse_ask(text, tag_keys=KEYS).wants_help


def test_thorough_at_the_end_counts_and_slack_escaping_is_undone() -> None:
    command = parse_ask("Is R&amp;D &lt;= 5%? --thorough", tag_keys=KEYS)

    assert command.thorough and command.question == "Is R&D <= 5%?"


def test_only_folios_own_mention_is_removed_from_a_question() -> None:
    text = "<@UFOLIO> what did <@U123> approve &amp; when?"

    assert clean_question(text, bot_user_id="UFOLIO") == "what did <@U123> approve & when?"
