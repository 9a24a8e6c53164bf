"""The shared value types: tags, scopes and how a conversation records its turns."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.models import Answer, Conversation, Scope, Tag


@pytest.mark.parametrize("text", ["department:finance", "Department=finance", " department : finance "])
def test_tag_accepts_colon_or_equals(text: str) -> None:
    assert Tag.parse(text) == Tag(key="department", value="finance")


@pytest.mark.parametrize("text", ["finance", ":finance", "department:", ""])
def test_malformed_tag_explains_the_form(text: str) -> None:
    with pytest.raises(ValueError, match="key:value"):
        Tag.parse(text)


def test_tag_value_keeps_quotes_and_colons_verbatim() -> None:
    assert Tag.parse("client:O'Brien: Ltd").value == "O'Brien: Ltd"


def test_scope_requires_a_container() -> None:
    with pytest.raises(ValidationError):
        Scope(container="  ")


def test_scope_groups_tags_by_key() -> None:
    scope = Scope(
        container="c",
        tags=(Tag(key="year", value="2025"), Tag(key="dept", value="hr"), Tag(key="year", value="2026")),
    )
    assert scope.tags_by_key() == {"year": ("2025", "2026"), "dept": ("hr",)}
    assert scope.describe() == "c (year:2025, dept:hr, year:2026)"


def test_record_moves_the_chain_only_on_a_final_answer() -> None:
    conversation = Conversation(scope=Scope(container="c"))
    conversation.record("q1", Answer(text="a1", response_ids=("r1", "r2"), final_response_id="r2"))
    assert conversation.last_response_id == "r2"
    conversation.record("q2", Answer(text="cap", response_ids=("r3",), final_response_id=None, profile="thorough"))
    assert conversation.last_response_id == "r2"
    assert conversation.response_ids == ["r1", "r2", "r3"]
    assert [turn.question for turn in conversation.turns] == ["q1", "q2"]
    assert conversation.profile == "thorough"


def test_conversation_round_trips_through_json() -> None:
    conversation = Conversation(scope=Scope(container="c", tags=(Tag(key="year", value="2025"),)))
    conversation.record("q", Answer(text="a", response_ids=("r1",), final_response_id="r1"), asked_by="U1")
    again = Conversation.model_validate_json(conversation.model_dump_json())
    assert again == conversation


def test_a_scope_allows_its_containers_passages_whatever_their_tags_unless_it_names_tags() -> None:
    finance, year = Tag(key="department", value="finance"), Tag(key="year", value="2025")
    assert Scope(container="hr").allows("hr", ())
    assert Scope(container="hr").allows("hr", (finance, year))
    assert not Scope(container="hr").allows("legal", (finance,))
    tagged = Scope(containers=("hr", "legal"), tags=(finance,))
    assert tagged.allows("legal", (finance, year))
    assert not tagged.allows("legal", (year,))
    assert not tagged.allows("ops", (finance,))
