"""One citation rule (issue 18, items 2 and 10): the final render and the streaming check are one implementation, so
whatever the model writes and however its text is cut into deltas, the stream shows exactly the rendered answer."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.citation_marks import MARKER
from bot.citation_stream import CitationStream
from bot.citations import needs_correction, render, unknown_refs
from bot.models import Citation
from tests.agent.doubles import chunk, link

KNOWN = {"S1": chunk(1, page=12), "S2": chunk(2, page=12), "S3": chunk(3, file="plan.pdf", page=4)}

# Pieces a model (or a document it quotes) writes: markers, plain labels, links, images, sandbox paths, brackets.
FRAGMENTS = [
    "[S1]",
    "[S2]",
    "[S3]",
    "[S9]",
    "[s 3]",
    "［S3］",
    "【S1】",
    "[S1, S9]",
    "[S1-S3]",
    "[1]",
    "[2]",
    "[1, 2]",
    "［3］",
    "[NOT_IN_DOCUMENTS]",
    "[the policy]",
    "(https://example.org/a)",
    "https://example.org/p?q=1",
    "](",
    "[",
    "]",
    "(",
    ")",
    "!",
    "![chart](https://x.example/c.png)",
    '[a](https://x.example/a "t)")',
    "[S1](https://e.example)",
    "sandbox:/mnt/data/",
    "/mnt/data/out/t.csv",
    "/mnt/da",
    "sand",
    "[x](sandbox:/mnt/data/a b.csv)",
    "[](/mnt/data/z)",
    " ",
    "  ",
    "\n",
    "\n\n",
    ".",
    ",",
    '"',
    "S1",
    "Leave is 20 days",
    " fees",
    "a",
    "é",
    "\t",
    "\u200b",
    "[S",
    "3",
    "］",
    "【",
    "[S1 and an aside that runs on for longer than any marker would ever be written",
    "[1 -",
    "-",
    "x" * 70,
    "![",
    "[NOT_IN",
    "(sandbox:/mnt/data/q.csv)",
]
TEXTS = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)


def streamed(text: str, cuts: list[int]) -> tuple[str, CitationStream]:
    checker = CitationStream(KNOWN, link_for=link)
    shown = ""
    for start, end in zip([0, *cuts], [*cuts, len(text)]):
        for piece in checker.feed(text[start:end]):
            shown += f"[{piece.label}]" if isinstance(piece, Citation) else piece
    for piece in checker.close():
        shown += f"[{piece.label}]" if isinstance(piece, Citation) else piece
    return shown, checker


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=TEXTS)
def test_the_stream_shows_exactly_the_rendered_answer_however_the_text_is_cut(data: st.DataObject, text: str) -> None:
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12)))) if text else []
    rendered = render(text, KNOWN, link_for=link)

    shown, checker = streamed(text, [cut for cut in cuts if 0 < cut < len(text)])

    assert shown == checker.text == rendered.text
    assert checker.citations == rendered.citations and checker.dropped == rendered.dropped
    assert "/mnt/data" not in shown  # a reader cannot open a sandbox path
    for span in rendered.markers:
        assert rendered.text[span.start : span.end] == f"[{span.label}]"


@given(text=TEXTS)
@settings(max_examples=200, deadline=None)
def test_every_bracketed_number_in_an_answer_is_a_checked_citation(text: str) -> None:
    rendered = render(text, KNOWN, link_for=link)
    labels = {c.label for c in rendered.citations}
    spans = {(span.start, span.end) for span in rendered.markers}

    for match in re.finditer(r"[\[［]\s*(\d+)\s*[\]］]", rendered.text):
        assert (match.start(), match.end()) in spans and int(match.group(1)) in labels, rendered.text
    assert MARKER.search(rendered.text) is None, rendered.text  # no [S3] a reader could take for a source


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("[[S9]3]", "3]"),  # the removed marker would have joined "[" and "3]" into a number nobody checked
        ("[[1]3]", "3]"),
        ("[[NOT_IN_DOCUMENTS]3]", "3]"),
        ("[[](/mnt/data/z)3](", "3]("),  # a sandbox link's label "[" followed by "3]"
        ("[/mnt/data/3]", "3]"),  # a sandbox file named "3" in brackets
        ("[S[S9]1]", "1]"),
        ("[1, [S9]2]", "2]"),
        ("[[[](/mnt/data/z)S1", "S1"),  # the label "[[" and the "[" before it: each half a marker
        ("see [[S1]] and [S9].", "see [[1]] and."),  # a checked citation keeps what stands before it
    ],
)
def test_what_a_removed_marker_leaves_never_makes_a_new_one(written: str, shown: str) -> None:
    rendered = render(written, KNOWN, link_for=link)

    assert rendered.text == shown
    assert streamed(written, list(range(1, len(written))))[0] == shown  # one character at a time: the same


def test_a_label_the_model_writes_itself_is_removed_and_asks_for_a_correction() -> None:
    text = "Leave is 20 days [1]. Fees are waived [2]. Carry-over [S3] and [1, 2]."

    rendered = render(text, KNOWN, link_for=link)

    assert rendered.text == "Leave is 20 days. Fees are waived. Carry-over [1] and."
    assert [c.file for c in rendered.citations] == ["plan.pdf"]
    assert unknown_refs(text, KNOWN) == ["[1]", "[2]", "[1, 2]"]
    assert needs_correction(text, KNOWN, sources_shown=True)
