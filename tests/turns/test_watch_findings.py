"""The watch's pure part: which citations no longer stand, and the note a person reads (issue 34)."""

from __future__ import annotations

from bot.models import Chunk, Citation, CitedPassage, Conversation, DocumentChange, Scope, Turn, passage_fingerprint
from bot.store import ThreadKey
from bot.turns.watch import findings, note_id, note_text, watched_documents

OLD = "Refunds within 30 days."


def page(number: int, text: str, file: str = "refunds.pdf") -> Chunk:
    return Chunk(id=f"{file}-p{number}", file=file, page=number, container="finance", text=text)


def cited(file: str = "refunds.pdf", text: str = OLD) -> Conversation:
    citation = Citation(
        label=1,
        file=file,
        title=file,
        page=2,
        container="finance",
        passages=(CitedPassage(id=f"{file}-p2", fingerprint=passage_fingerprint(text)),),
    )
    return Conversation(
        scope=Scope(container="finance"), turns=[Turn(question="q", answer="a [1]", citations=(citation,))]
    )


def changed(file: str = "refunds.pdf", previous: str | None = None) -> DocumentChange:
    return DocumentChange(
        container="finance",
        document=file,
        identity="id1",
        kind="changed",
        old_version="a",
        new_version="b",
        previous_name=previous,
    )


def test_the_same_words_on_another_page_still_stand_and_other_words_do_not() -> None:
    watched = watched_documents([changed()])
    moved = {("finance", "refunds.pdf"): [page(1, "Contents"), page(3, "Refunds  within\n30 days.")]}
    now = {("finance", "refunds.pdf"): [page(1, "Contents"), page(2, "Refunds within 14 days.")]}

    assert findings(cited(), watched, moved) == []
    [found] = findings(cited(), watched, now)
    assert (found.removed, found.now_reads) == (False, "Refunds within 14 days.")


def test_a_renamed_document_is_found_under_the_name_the_citation_knows() -> None:
    watched = watched_documents([changed("refunds-2027.pdf", previous="refunds.pdf")])
    now = {("finance", "refunds.pdf"): [page(2, "Refunds within 14 days.", file="refunds-2027.pdf")]}

    [found] = findings(cited(), watched, now)
    assert found.now_reads == "Refunds within 14 days."


def test_document_text_cannot_mention_people_or_forge_links_in_the_note() -> None:
    watched = watched_documents([changed()])
    now = {("finance", "refunds.pdf"): [page(2, "<!channel> see <https://evil.example|the policy> & more")]}

    text = note_text(findings(cited(), watched, now), reachable=True, day="2 Dec")

    assert "<!channel>" not in text and "<https://" not in text
    assert "&lt;!channel&gt; see &lt;https://evil.example|the policy&gt; &amp; more" in text


def test_a_thread_that_no_longer_reaches_the_document_is_told_only_that_a_source_is_gone() -> None:
    watched = watched_documents([changed()])
    found = findings(cited(), watched, {("finance", "refunds.pdf"): [page(2, "Secret new terms.")]})

    assert note_text(found, reachable=False, day="2 Dec") == "A source an answer here relied on is no longer available."


def test_the_same_thread_and_changes_give_the_same_note_id() -> None:
    thread = ThreadKey(team="T", channel="C", thread_ts="1.2")
    assert note_id(thread, [changed()]) == note_id(thread, [changed()])
    assert note_id(thread, [changed()]) != note_id(ThreadKey(team="T", channel="C", thread_ts="1.3"), [changed()])
