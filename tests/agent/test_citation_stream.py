"""Citations checked while the answer is written: what a reader could see at every moment of the stream."""

from __future__ import annotations

import random

from bot.citation_stream import CitationStream
from bot.citations import render
from bot.models import Citation
from tests.agent.doubles import chunk, link

KNOWN = {"S1": chunk(1, page=12), "S2": chunk(2, page=12), "S3": chunk(3, file="plan.pdf", page=4)}

ANSWERS = [
    "Leave is 20 days [S3]. It accrues monthly [S1][S2]. Carry-over is 5 days [S2].",
    "Fees are waived [S1, S9; S3]. Nobody knows [S7]. Done [S1] [S9][S1].",
    "  [NOT_IN_DOCUMENTS] The documents do not say. See [the table] or [S",
    "[S9] starts with an unknown marker, then [S3].\n\nA list:\n- one [ S1 ]\n- two [S2;S3]  ",
    "Brackets [like this] and [S1 are prose; a [S2] ends it [NOT_IN_DOCUMENTS] here.",
    "Fees ［S9］ apply 【S3】. Also 〔s1〕 and ［Ｓ２］ here [S1］.",
]


def shown(pieces: list) -> str:
    return "".join(f"[{p.label}]" if isinstance(p, Citation) else p for p in pieces)


def stream(text: str, cuts: list[int]) -> tuple[CitationStream, list[str]]:
    """Feed `text` cut at `cuts`; return the stream and what was visible after each delta."""
    checker = CitationStream(KNOWN, link_for=link)
    visible, seen = "", []
    for start, end in zip([0, *cuts], [*cuts, len(text)]):
        visible += shown(checker.feed(text[start:end]))
        seen.append(visible)
    visible += shown(checker.close())
    seen.append(visible)
    return checker, seen


def test_streamed_pieces_add_up_to_the_rendered_answer_however_the_text_is_cut() -> None:
    chance = random.Random(11)
    for text in ANSWERS:
        expected = render(text, KNOWN, link_for=link)
        for _ in range(200):
            cuts = sorted(chance.sample(range(1, len(text)), k=chance.randint(1, min(25, len(text) - 1))))
            checker, seen = stream(text, cuts)
            assert seen[-1] == checker.text == expected.text, (text, cuts)
            assert checker.citations == expected.citations and checker.dropped == expected.dropped


def test_an_unknown_or_half_written_marker_is_never_visible_even_for_a_moment() -> None:
    text = "Fees are waived [S1, S9]. Nobody knows [S7]. Half [S"
    for size in (1, 2, 3, 5):
        _, seen = stream(text, list(range(size, len(text), size)))
        for visible in seen[:-1]:
            assert "S9" not in visible and "S7" not in visible and "[S" not in visible
    _, seen = stream(text, list(range(1, len(text))))
    assert seen[-1] == "Fees are waived [1]. Nobody knows. Half [S"  # never closed: plain text after all


def test_a_full_width_or_cjk_bracketed_marker_is_held_like_an_ascii_one() -> None:
    text = "Fees ［S9］ apply 【S3】 and 〔S7〕."
    for size in (1, 2, 3):
        _, seen = stream(text, list(range(size, len(text), size)))
        for visible in seen:
            assert not any(mark in visible for mark in "［】〔〕") and "S" not in visible.replace("Fees", "")
        assert seen[-1] == "Fees apply [1] and."


def test_a_marker_in_full_width_brackets_is_held_back_like_one_in_square_brackets() -> None:
    text = "Fees are waived \uff3bS9\uff3d. Nobody knows \u3010S7\u3011. Leave is 20 days \u3010S3\u3011."
    for size in (1, 2, 3):
        _, seen = stream(text, list(range(size, len(text), size)))
        for visible in seen:
            assert "S" not in visible.replace("Fees", ""), visible
        assert seen[-1] == "Fees are waived. Nobody knows. Leave is 20 days [1]."


def test_a_known_marker_appears_as_its_label_as_soon_as_it_is_closed() -> None:
    checker = CitationStream(KNOWN, link_for=link)
    assert shown(checker.feed("Leave is 20 days [S")) == "Leave is 20 days"
    assert checker.feed("3") == []
    [space, citation] = checker.feed("]")
    assert space == " " and isinstance(citation, Citation)
    assert (citation.label, citation.url) == (1, "https://docs.example/plan.pdf#page=4")


def test_prose_brackets_are_held_only_until_they_cannot_be_a_link_or_grow_too_long() -> None:
    checker = CitationStream(KNOWN, link_for=link)
    assert shown(checker.feed("See [the table")) == "See"
    assert shown(checker.feed("]")) == ""  # a link's address may follow: "[the table](https://...)"
    assert shown(checker.feed(" and [" + "x" * 300)) == " [the table] and [" + "x" * 300
