"""Block Kit rendering: inline citation links, sources, filters, buttons, escaping and Slack's size limits."""

from __future__ import annotations

import json
import re
from datetime import date

from slack_sdk.models.blocks import Block

from bot.models import Answer, Citation, MarkerSpan, Scope, Tag
from bot.slack.render import (
    ACTION_DELETE,
    ACTION_THINK_HARDER,
    BLOCK_LIMIT,
    SECTION_LIMIT,
    answer_footer,
    answer_markdown,
    citation_markdown,
    escape_markdown,
    render_answer,
    render_notice,
    render_question,
    source_line,
    split_mrkdwn,
)

SCOPE = Scope(container="benefits", tags=(Tag(key="year", value="2025"),))


def cited(text: str, *citations: Citation) -> Answer:
    markers = tuple(
        MarkerSpan(start=match.start(), end=match.end(), label=int(match.group(1)))
        for match in re.finditer(r"\[(\d+)\]", text)
    )
    return Answer(text=text, citations=citations, markers=markers)


def citation(label: int, url: str | None = "https://docs.example.com/handbook.pdf#page=4") -> Citation:
    return Citation(label=label, file="handbook.pdf", title="Employee handbook", page=4, container="benefits", url=url)


def valid(blocks: list[dict]) -> list[dict]:
    """Parse every block back through slack_sdk's models, which check Slack's limits."""
    assert len(blocks) <= BLOCK_LIMIT
    for block in blocks:
        parsed = Block.parse(block)
        assert parsed is not None
        parsed.validate_json()
    return blocks


def all_text(blocks: list[dict]) -> str:
    return json.dumps(blocks, ensure_ascii=False)


def test_citations_become_inline_links_to_the_page_and_are_listed_as_sources() -> None:
    message = render_answer(cited("You get 25 days [1].", citation(1)), scope=SCOPE, turn_index=0)
    blocks = valid(message.block_dicts())

    assert blocks[0]["text"]["text"] == "You get 25 days <https://docs.example.com/handbook.pdf#page=4|[1]>."
    source = "[1] <https://docs.example.com/handbook.pdf#page=4|Employee handbook>, page 4 · benefits"
    assert source in all_text(blocks)
    assert "Applied filters: `year:2025`" in all_text(blocks)
    assert message.text == "You get 25 days [1]."


def test_each_source_says_how_old_its_document_is() -> None:
    today = date(2026, 12, 2)
    dated = citation(1).model_copy(update={"updated": "2026-11-29"})

    assert source_line(dated, today).endswith("page 4 · benefits · updated 3 days ago")
    assert source_line(dated.model_copy(update={"updated": "2026-12-01"}), today).endswith("· updated yesterday")
    assert source_line(dated.model_copy(update={"updated": "2027-01-01"}), today).endswith("· updated today")
    assert source_line(dated.model_copy(update={"updated": "not a date"}), today).endswith("page 4 · benefits")
    assert source_line(citation(1), today).endswith("page 4 · benefits")  # no date known: nothing said


def test_model_text_is_escaped_and_cannot_forge_links_or_mentions() -> None:
    evil = citation(1, "https://x.example/a.pdf?a=1|b&c=2")
    answer = cited("Use <!channel> & <https://evil.example|click> [1]", evil)
    section = valid(render_answer(answer, scope=SCOPE, turn_index=0).block_dicts())[0]["text"]["text"]

    assert section.startswith("Use &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt; ")
    assert "<https://x.example/a.pdf?a=1%7Cb&amp;c=2|[1]>" in section


def test_a_citation_without_url_stays_a_plain_label() -> None:
    blocks = render_answer(cited("Yes [1].", citation(1, url=None)), scope=SCOPE, turn_index=0).block_dicts()

    assert valid(blocks)[0]["text"]["text"] == "Yes [1]."


def test_buttons_carry_the_turn_and_think_harder_is_offered_only_after_a_fast_answer() -> None:
    fast = valid(render_answer(cited("A."), scope=SCOPE, turn_index=3).block_dicts())
    thorough = valid(render_answer(Answer(text="A.", profile="thorough"), scope=SCOPE, turn_index=3).block_dicts())

    actions = [element["action_id"] for element in fast[-1]["elements"]]
    assert ACTION_THINK_HARDER in actions and ACTION_DELETE in actions
    assert json.loads(fast[-1]["elements"][0]["value"]) == {"turn": 3}
    assert ACTION_THINK_HARDER not in [element["action_id"] for element in thorough[-1]["elements"]]


def test_a_long_answer_is_split_into_sections_and_kept_within_fifty_blocks() -> None:
    paragraph = "Word " * 500 + "[1]\n\n"
    long_answer = cited(paragraph * 10, citation(1))
    blocks = valid(render_answer(long_answer, scope=SCOPE, turn_index=0).block_dicts())
    sections = [block["text"]["text"] for block in blocks if block["type"] == "section"]
    assert len(sections) > 4 and all(len(text) <= SECTION_LIMIT for text in sections)
    assert sum(text.count("|[1]>") for text in sections) == 10  # no link was cut in half

    huge = cited("x" * 200_000)
    blocks = valid(render_answer(huge, scope=SCOPE, turn_index=0).block_dicts())
    assert "too long" in all_text(blocks)


def test_splitting_never_breaks_an_entity_or_a_link() -> None:
    entity = "a" * 2997 + "&amp;" + "b" * 10
    assert split_mrkdwn(entity) == ["a" * 2997, "&amp;" + "b" * 10]
    linked = "a" * 2990 + "<https://x.example|[1]>" + "b" * 10
    assert split_mrkdwn(linked) == ["a" * 2990, "<https://x.example|[1]>" + "b" * 10]


def test_notices_and_the_ask_restatement_are_valid_blocks() -> None:
    notices = Answer(text="Quoted passage [1].", notices=("No model is set up.",), mode="search_only")
    assert valid(render_answer(notices, scope=SCOPE, turn_index=0).block_dicts())[0]["type"] == "context"
    assert valid(render_notice("Something <failed>").block_dicts())
    question = render_question("Is A<B?", user="U1", scope=SCOPE, thorough=True)
    assert "<@U1> asked: Is A&lt;B?" in all_text(valid(question.block_dicts()))
    assert "thorough" in all_text(question.block_dicts())


def test_stream_markdown_links_each_label_and_leaves_the_model_no_links_or_mentions_of_its_own() -> None:
    text = "See [1]. [click here](https://evil.example) <!channel> <@U123> @here & **bold** (a) [2]"
    answer = cited(text, citation(1), citation(2, url="https://docs.example.com/a b(1).pdf#page=2"))

    markdown = answer_markdown(answer)

    assert markdown.startswith("See [[1]](https://docs.example.com/handbook.pdf#page=4).")
    assert markdown.endswith("[[2]](https://docs.example.com/a%20b%281%29.pdf#page=2)")
    assert "here](" not in markdown and "\\[click here\\](https://evil.example)" in markdown  # escaped: not a link
    assert "<!channel>" not in markdown and "<@U123>" not in markdown and "@here" not in markdown
    assert "**bold**" in markdown  # the model's own formatting is kept
    assert escape_markdown("a\\b") == "a\\\\b"


def test_an_exclamation_before_a_label_never_turns_its_link_into_an_image() -> None:
    answer = cited("You are fully covered![1] Really![2]", citation(1), citation(2))

    markdown = answer_markdown(answer)

    assert not re.search(r"(?<!\\)!\[", markdown)  # `![[1]](url)` is an image in standard markdown, not a link
    assert "covered\\![[1]](https://docs.example.com/handbook.pdf#page=4)" in markdown
    assert escape_markdown("covered!") + citation_markdown(citation(1)) in markdown  # the same, piece by piece


def test_a_streamed_answer_ends_with_its_notices_sources_filters_and_buttons() -> None:
    answer = cited("Leave is 20 days [1].", citation(1)).model_copy(update={"notices": ("Restored.",)})

    footer = valid(answer_footer(answer, scope=SCOPE, turn_index=2).block_dicts())

    shown = json.dumps(footer)
    assert footer[0]["type"] == "context" and "Restored." in shown
    assert "Employee handbook" in shown and "year:2025" in shown and ACTION_DELETE in shown
    assert "Leave is 20 days" not in shown  # the text itself was streamed above


def test_a_source_title_with_line_breaks_or_slack_syntax_stays_one_inert_link() -> None:
    hostile = Citation(
        label=1,
        file="memo.pdf",
        title="Memo\n<!channel> |evil>\r\n2026",
        page=2,
        container="benefits",
        url="https://docs.example.com/memo.pdf#page=2",
    )
    blocks = valid(render_answer(cited("Yes [1].", hostile), scope=SCOPE, turn_index=0).block_dicts())

    source = "[1] <https://docs.example.com/memo.pdf#page=2|Memo &lt;!channel&gt; |evil&gt; 2026>, page 2 · benefits"
    assert source in all_text(blocks)
