"""Finding a cited passage in a page's text layer: tolerant of what a reader does not see (line breaks, hyphens at
line ends, ligatures, case), and refusing whenever the place is not certain."""

from __future__ import annotations

from bot.viewer.marks import line_marks
from bot.viewer.pages import CharBox
from bot.viewer.passage import Anchors, anchors_of, locate

PASSAGE = (
    "The supplier shall deliver the final goods within thirty days of the purchase order and bear the cost of "
    "management of returns."
)


def test_a_passage_is_found_across_line_breaks_hyphenation_ligatures_and_case() -> None:
    page = (
        "Section 4\r\nTHE SUPPLIER shall deliver the ﬁnal goods within thirty days of the pur-\r\nchase order and "
        "bear the cost of manage\u00ad\r\nment of returns.\r\nSection 5 is about something else."
    )
    located = locate(anchors_of(PASSAGE), page)
    assert located is not None and not located.partial
    assert page[located.first : located.last + 1].startswith("THE SUPPLIER")
    assert page[located.first : located.last + 1].endswith("ment of returns.")


def test_a_passage_absent_ambiguous_or_too_short_is_not_located() -> None:
    assert locate(anchors_of(PASSAGE), "Section 4\nNothing of the kind is written here at all.") is None
    twice = f"{PASSAGE}\n{PASSAGE}"
    assert locate(anchors_of(PASSAGE), twice) is None  # two places: which one was cited cannot be known
    assert locate(anchors_of("Yes."), "Yes. No. Yes.") is None
    assert locate(anchors_of("Net 30"), "Payment terms: Net 30 from invoice") is None  # under 12 letters: anywhere


def test_a_passage_whose_middle_differs_in_length_is_not_located() -> None:
    anchors = anchors_of(PASSAGE)
    padded = PASSAGE.replace("within thirty days", "within thirty days " + "and many more words " * 10)
    assert locate(anchors, padded) is None
    assert locate(Anchors(head=anchors.head, tail=anchors.tail, size=anchors.size * 3), PASSAGE) is None


def test_a_passage_running_on_to_the_next_page_is_located_by_its_opening_words_never_the_footer() -> None:
    page = "Section 4\nThe supplier shall deliver the final goods within thirty days\nAcme Ltd - page 4 of 9"
    located = locate(anchors_of(PASSAGE), page)
    assert located is not None and located.partial
    assert (
        page[located.first : located.last + 1] == "The supplier shall deliver the final goods within"
    )  # the sure part


def test_highlight_boxes_run_one_per_line_from_the_first_character_to_the_last() -> None:
    def box(left: float, top: float) -> CharBox:
        return CharBox(left=left, top=top, right=left + 1, bottom=top + 2)

    boxes = [box(10, 10), box(11, 10), None, box(13, 10), box(5, 13), box(6, 13), box(30, 13)]
    marks = line_marks(boxes, 1, 5)
    assert [(m.left, m.top) for m in marks] == [(10.85, 9.85), (4.85, 12.85)]
    assert [round(m.left + m.width, 2) for m in marks] == [14.15, 7.15]  # the last line stops at its last character


def test_a_passage_whose_opening_words_end_the_page_is_located_there_only() -> None:
    passage = "Generally, out-of-network providers are not required to accept the amount the plan pays."
    page = "You should know what you will pay out of pocket. Generally, out-of-"
    located = locate(anchors_of(passage), page)
    assert located is not None and located.partial
    assert page[located.first : located.last + 1] == "Generally, out-of"
    assert locate(anchors_of(passage), page + "\nPage 8 of 90, Northwind") is None  # not at the page's end: not it
    assert locate(anchors_of(passage), "You will pay. Gener") is None  # too few letters to be sure
