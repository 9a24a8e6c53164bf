"""When a stream's text goes (bot.slack.stream_outbox): the first whole words at once, then by time and size, never a
word cut in two. Pure: a clock the test moves."""

from __future__ import annotations

from bot.slack.stream_outbox import BATCH, LAG, LONGEST_WORD, MIN_GAP, Outbox


def texts(chunks: list[dict]) -> str:
    return "".join(chunk["text"] for chunk in chunks if chunk["type"] == "markdown_text")


def test_the_first_words_go_at_once_and_the_word_being_written_waits_for_its_end() -> None:
    box = Outbox()
    box.text("Benc", whole=False, now=1.0)

    assert box.due(now=1.0) is None  # not one whole word yet: nothing to show

    box.text("hmarks are pub", whole=False, now=1.05)
    assert box.due(now=1.05) == 1.05
    assert texts(box.take(now=1.05)) == "Benchmarks are "
    box.text("lished.", whole=False, now=1.1)
    assert texts(box.rest()) == "published."  # the end: the last word goes with the stop


def test_after_the_first_words_text_waits_at_most_lag_or_goes_sooner_once_a_batch_gathered() -> None:
    box = Outbox()
    box.text("First words ", whole=False, now=0.0)
    box.take(now=0.0)

    box.text("then more ", whole=False, now=0.1)
    assert box.due(now=0.1) == 0.1 + LAG  # by time: the oldest waiting text sets it

    box.text("x " * BATCH, whole=False, now=0.2)
    assert box.due(now=0.2) == MIN_GAP  # by size: once the stream's last append is MIN_GAP old
    assert texts(box.take(now=0.3)).startswith("then more x x")


def test_a_citation_goes_whole_and_a_card_goes_at_once_with_the_text_that_is_ready() -> None:
    box = Outbox()
    box.text("Covered ", whole=False, now=0.0)
    box.text("[[1]](https://docs.example/a.pdf#page=2)", whole=True, now=0.0)

    assert texts(box.take(now=0.0)) == "Covered [[1]](https://docs.example/a.pdf#page=2)"

    box.text("And out of netw", whole=False, now=0.1)
    box.card({"type": "task_update", "id": "s2", "title": "Searching: x", "status": "in_progress"})
    assert box.due(now=0.1) == 0.1
    sent = box.take(now=0.1)
    assert texts(sent) == "And out of " and sent[-1]["type"] == "task_update"
    assert texts(box.rest()) == "netw"


def test_a_card_not_sent_yet_shows_its_latest_state_only() -> None:
    box = Outbox()
    box.card({"type": "task_update", "id": "s1", "title": "Searching: x", "status": "in_progress"})
    box.card({"type": "task_update", "id": "s1", "title": "Searching: x", "status": "complete"})

    assert box.take(now=0.0) == [{"type": "task_update", "id": "s1", "title": "Searching: x", "status": "complete"}]


def test_a_card_that_comes_mid_word_goes_before_that_word_which_stays_whole() -> None:
    box = Outbox()
    box.text("Totals are 4", whole=False, now=0.0)
    box.card({"type": "task_update", "id": "c1", "title": "Calculating", "status": "complete"})
    box.text("2 in all ", whole=False, now=0.1)

    sent = box.take(now=0.1)

    assert [chunk.get("text", chunk["type"]) for chunk in sent] == ["Totals are ", "task_update", "42 in all "]


def test_a_word_longer_than_any_word_does_not_hold_the_answer_back() -> None:
    box = Outbox()
    blob = "x" * (LONGEST_WORD + 1)  # a model writing a blob without spaces (base64, a minified line)
    box.text("Here: " + blob, whole=False, now=0.0)

    assert texts(box.take(now=0.0)) == "Here: " + blob
