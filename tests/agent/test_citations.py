"""Citation checking, as pure functions: what a reader sees for the model's [S#] markers."""

from __future__ import annotations

import time

from bot.citations import display_name, needs_correction, render, unknown_refs
from tests.agent.doubles import chunk, link

KNOWN = {
    "S1": chunk(1, page=12),
    "S2": chunk(2, page=12),  # another passage of the same page
    "S3": chunk(3, file="plan.pdf", page=4),
    "S4": chunk(4, file="orders.xlsx.pdf", tabular=True),
}


def test_markers_become_labels_numbered_by_first_use_and_deduplicated_by_page() -> None:
    text = "Leave is 20 days [S3]. It accrues monthly [S1][S2]. Carry-over is 5 days [S2]."

    rendered = render(text, KNOWN, link_for=link)

    assert rendered.text == "Leave is 20 days [1]. It accrues monthly [2]. Carry-over is 5 days [2]."
    assert [(c.label, c.file, c.page) for c in rendered.citations] == [(1, "plan.pdf", 4), (2, "handbook.pdf", 12)]
    assert rendered.citations[0].url == "https://docs.example/plan.pdf#page=4"
    for span in rendered.markers:
        assert rendered.text[span.start : span.end] == f"[{span.label}]"
    assert [span.label for span in rendered.markers] == [1, 2, 2]


def test_grouped_markers_are_split_and_unknown_ones_removed() -> None:
    rendered = render("Fees are waived [S1, S9; S3]. Nobody knows [S7].", KNOWN, link_for=link)

    assert rendered.text == "Fees are waived [1][2]. Nobody knows."
    assert rendered.dropped == ("S9", "S7")
    assert "S9" not in rendered.text and "S7" not in rendered.text


def test_tabular_source_shows_original_name_and_no_page() -> None:
    rendered = render("Order 7 shipped [S4].", KNOWN, link_for=link)

    (citation,) = rendered.citations
    assert (citation.title, citation.file) == ("orders.xlsx", "orders.xlsx.pdf")
    assert (citation.page, citation.kind) == (None, "table")
    assert citation.url == "https://docs.example/orders.xlsx.pdf"
    assert display_name("handbook.pdf") == "handbook.pdf"


def test_sandbox_paths_are_scrubbed() -> None:
    text = "Total is 42 [S1]. [Download the table](sandbox:/mnt/data/totals.csv) or open /mnt/data/out/chart.png."

    rendered = render(text, KNOWN, link_for=link)

    assert "/mnt/data" not in rendered.text and "sandbox:" not in rendered.text
    assert rendered.text == "Total is 42 [1]. Download the table or open chart.png."
    assert render("see sandbox:/mnt/data/a.csv", KNOWN, link_for=link).text == "see a.csv"


def test_correction_is_needed_for_unknown_markers_or_uncited_facts() -> None:
    assert unknown_refs("A [S1]. B [S8]. C [S8].", KNOWN) == ["S8"]
    assert needs_correction("A [S1]. B [S8].", KNOWN, sources_shown=True)
    assert needs_correction("The notice period is 30 days.", KNOWN, sources_shown=True)
    assert not needs_correction("The notice period is 30 days.", {}, sources_shown=False)
    assert not needs_correction("[NOT_IN_DOCUMENTS] Nothing covers pets.", KNOWN, sources_shown=True)
    assert not needs_correction("A [S1].", KNOWN, sources_shown=True)


LOOK_ALIKES = {  # what a model writes -> what a reader sees (KNOWN: S1, S2 on handbook page 12; S3 plan.pdf page 4)
    "A [s3].": "A [1].",
    "A [S 3].": "A [1].",
    "A [S3-S1].": "A [1][2].",
    "A [S1–S3].": "A [1][2].",  # an en dash: S1, S2 and S3, two pages
    "A [S1 — S3].": "A [1][2].",
    "A ［S3］.": "A [1].",  # full-width brackets
    "A 【S3】.": "A [1].",
    "A [Ｓ３].": "A [1].",  # full-width letter and digit
    "A [S3, page 4].": "A [1].",
    "A [S3, sections 1-2].": "A [1].",  # only ids read: the s of "sections" names nothing
    "A [S3 and S1].": "A [1][2].",
    "A [S9].": "A.",
    "A [s 9] and [S9-S12] and 【S10】.": "A and and.",
    "A [S1-S999999999].": "A [1].",  # a huge range is not expanded: only its ends are read
    "A [S٣].": "A [1].",  # an Arabic-Indic digit three
    "A [S𝟑].": "A [1].",  # a mathematical bold three
    "A [S³] and [S₃].": "A [1] and [1].",  # superscript and subscript three
    "A [S​3] and [⁠S3].": "A [1] and [1].",  # invisible characters inside
    "A 〖S3〗 and ⟦S3⟧.": "A [1] and [1].",  # other square-looking brackets
    "A [Ѕ3].": "A.",  # a Cyrillic letter that looks like S names no source: removed
    "A [S3 then an aside far longer than any marker would ever be, and never closed": (
        "A [1] then an aside far longer than any marker would ever be, and never closed"
    ),
}


def test_citation_look_alikes_are_read_as_markers_or_removed() -> None:
    for written, shown in LOOK_ALIKES.items():
        rendered = render(written, KNOWN, link_for=link)

        assert rendered.text == shown, written
        for span in rendered.markers:
            assert rendered.text[span.start : span.end] == f"[{span.label}]"
    assert unknown_refs("A [s9] and 【S3】.", KNOWN) == ["S9"]
    assert not needs_correction("A ［S3］.", KNOWN, sources_shown=True)


def test_links_the_model_writes_show_their_real_address() -> None:
    rendered = render(
        "Read [the policy](https://evil.example/login) [S1], ![chart](https://evil.example/x.png) and "
        "[https://evil.example](https://evil.example).",
        KNOWN,
        link_for=link,
    )

    assert rendered.text == (
        "Read the policy (https://evil.example/login) [1], chart (https://evil.example/x.png) and https://evil.example."
    )


def test_answers_built_to_make_the_patterns_backtrack_render_in_linear_time() -> None:
    # Each took 10 to 25 seconds before the patterns were bounded; now well under one.
    for text in ("[" * 50_000, "[S1" * 20_000, "[" * 30_000 + "](/mnt/data/"):
        started = time.perf_counter()
        render(text, KNOWN, link_for=link)
        assert time.perf_counter() - started < 3, text[:10]
