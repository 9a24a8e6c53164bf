"""The local engine: page-accurate keyword search, the Scope applied inside the query, and hostile input."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.errors import InvalidInput, SearchUnavailable
from bot.models import Chunk, Scope, Tag
from bot.retrieval import IndexWriter, Retriever
from bot.retrieval.local import LocalRetriever
from bot.retrieval.local_sql import insert_chunk
from tests.retrieval.helpers import chunk, fingerprints

HOSTILE = [
    "' or 1 eq 1 or '",
    'O\'Brien "quoted", with commas',
    "finance) or (container eq 'other'",
    "Zürich – 東京 ✓",
    "x' or tags/any(t: t ne 'x') or 'a' eq 'a",
]


async def put(index: LocalRetriever, *chunks: Chunk) -> None:
    by_file: dict[tuple[str, str], list[Chunk]] = {}
    for item in chunks:
        by_file.setdefault((item.container, item.file), []).append(item)
    for (container, file), items in by_file.items():
        await index.replace_file(container, file, "v1", items)


async def pages_found(tmp_path: Path, file: str, passages: dict[int, str], question: str, *, top: int) -> list[int]:
    """The pages a search for `question` returns among `passages` (page -> text) of `file` and 40 unrelated pages,
    so that the question's words are as rare in the index as in a real document."""
    index = LocalRetriever(tmp_path / "index.sqlite", score_gap=0.0)
    others = [chunk("c", file, f"Opening hours of site {n} are posted at its door.", page=n) for n in range(10, 50)]
    await put(index, *others, *(chunk("c", file, text, page=page) for page, text in passages.items()))
    found = await index.search(question, Scope(container="c"), top=top)
    await index.close()
    return [hit.page or 0 for hit in found]


@pytest.fixture
async def index(tmp_path: Path) -> AsyncIterator[LocalRetriever]:
    retriever = LocalRetriever(tmp_path / "index.sqlite", score_gap=0.0)
    yield retriever
    await retriever.close()


async def test_the_corpus_answers_hearing_aids_with_northwind_pages(corpus_index: Path) -> None:
    retriever = LocalRetriever(corpus_index)
    results = await retriever.search("hearing aids", Scope(container="benefits"), top=5)
    await retriever.close()
    assert results, "no results for a phrase the Northwind plans cover"
    assert all(hit.file.startswith("Northwind") for hit in results)
    assert all(isinstance(hit.page, int) and hit.page >= 1 for hit in results)
    assert any("hearing aid" in hit.text.lower() for hit in results)
    assert [hit.score for hit in results] == sorted((hit.score for hit in results), reverse=True)


async def test_it_satisfies_both_protocols(index: LocalRetriever) -> None:
    assert isinstance(index, Retriever) and isinstance(index, IndexWriter)


async def test_another_container_is_never_returned_even_when_it_matches_better(index: LocalRetriever) -> None:
    strong = " ".join(["refund policy refund"] * 20)
    await put(index, *[chunk("legal", f"legal{n}.pdf", strong) for n in range(30)])
    await put(index, chunk("finance", "fin.pdf", "a short note that mentions a refund once"))
    results = await index.search("refund policy", Scope(container="finance"), top=1)
    assert [(hit.container, hit.file) for hit in results] == [("finance", "fin.pdf")]


async def test_same_key_tags_are_alternatives_and_different_keys_all_apply(index: LocalRetriever) -> None:
    await put(
        index,
        chunk("c", "a.pdf", "travel policy", tags=("year:2025", "department:hr")),
        chunk("c", "b.pdf", "travel policy", tags=("year:2026", "department:hr")),
        chunk("c", "c.pdf", "travel policy", tags=("year:2026", "department:finance")),
        chunk("c", "d.pdf", "travel policy", tags=("year:2024", "department:hr")),
    )
    tags = (Tag(key="year", value="2025"), Tag(key="year", value="2026"), Tag(key="department", value="hr"))
    results = await index.search("travel policy", Scope(container="c", tags=tags), top=10)
    assert sorted(hit.file for hit in results) == ["a.pdf", "b.pdf"]
    assert all(Tag(key="department", value="hr") in hit.tags for hit in results)


@pytest.mark.parametrize("query", HOSTILE + ['"unbalanced', "NEAR(a b", "a AND OR NOT", "col:umn*", "^start -x +y"])
async def test_query_syntax_in_user_text_is_only_words(index: LocalRetriever, query: str) -> None:
    await put(index, chunk("c", "a.pdf", f"the text holds {query} among other words"))
    results = await index.search(query, Scope(container="c"), top=5)
    assert [hit.file for hit in results] == ["a.pdf"]


@pytest.mark.parametrize("value", HOSTILE)
async def test_hostile_tag_values_match_only_themselves_and_stay_in_the_container(
    index: LocalRetriever, value: str
) -> None:
    await put(
        index,
        chunk("c", "tagged.pdf", "budget report", tags=(f"team:{value}",)),
        chunk("c", "other.pdf", "budget report", tags=("team:ops",)),
        chunk("elsewhere", "secret.pdf", "budget report", tags=(f"team:{value}",)),
    )
    results = await index.search("budget", Scope(container="c", tags=(Tag(key="team", value=value),)), top=10)
    assert [(hit.container, hit.file) for hit in results] == [("c", "tagged.pdf")]


async def test_an_unknown_container_or_tag_key_finds_nothing(index: LocalRetriever) -> None:
    await put(index, chunk("c", "a.pdf", "budget report", tags=("team:ops",)))
    assert await index.search("budget", Scope(container="nope"), top=5) == []
    assert await index.search("budget", Scope(container="c", tags=(Tag(key="colour", value="red"),)), top=5) == []


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
async def test_an_empty_query_is_refused(index: LocalRetriever, query: str) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        await index.search(query, Scope(container="c"), top=5)


async def test_a_malformed_tag_key_is_refused(index: LocalRetriever) -> None:
    with pytest.raises(InvalidInput, match="tag key"):
        await index.search("budget", Scope(container="c", tags=(Tag(key="a' or '1", value="x"),)), top=5)


async def test_a_scope_without_a_container_cannot_be_made() -> None:
    with pytest.raises(ValueError):
        Scope(container="  ")


async def test_weak_matches_below_the_score_gap_are_cut(tmp_path: Path) -> None:
    index = LocalRetriever(tmp_path / "gap.sqlite", score_gap=0.5)
    strong = chunk("c", "strong.pdf", "dental implants dental implants coverage for dental implants")
    weak = chunk("c", "weak.pdf", "the cafeteria menu and " + "parking, " * 40 + "coverage")
    await put(index, strong, weak)
    results = await index.search("dental implants coverage", Scope(container="c"), top=5)
    await index.close()
    assert [hit.file for hit in results] == ["strong.pdf"]


async def test_replacing_a_file_drops_its_old_chunks(index: LocalRetriever) -> None:
    await put(index, chunk("c", "a.pdf", "old wording about pensions"))
    await index.replace_file("c", "a.pdf", "v2", [chunk("c", "a.pdf", "new wording about retirement", page=2)])
    assert await index.search("pensions", Scope(container="c"), top=5) == []
    [hit] = await index.search("retirement", Scope(container="c"), top=5)
    assert hit.page == 2
    assert await fingerprints(index, "c") == {"a.pdf": "v2"}
    await index.delete_file("c", "a.pdf")
    assert await index.count("c") == 0 and await fingerprints(index, "c") == {}


async def test_text_sources_come_back_without_a_page(index: LocalRetriever) -> None:
    await put(index, chunk("c", "notes.md", "onboarding checklist", page=None))
    [hit] = await index.search("onboarding", Scope(container="c"), top=5)
    assert hit.page is None


async def test_a_small_container_is_found_by_a_word_common_elsewhere(index: LocalRetriever) -> None:
    # "cover" and "health" are common in the big container, so only the rarer one ("cover") selects at first;
    # the small container holds only "health", and must still answer.
    big = [
        chunk("big", f"b{n}.pdf", ("cover " if n < 45 else "") + ("health" if n >= 40 else "misc")) for n in range(100)
    ]
    await put(index, *big, chunk("small", "s.pdf", "mental health support line"))
    results = await index.search("cover health", Scope(container="small"), top=5)
    assert [hit.file for hit in results] == ["s.pdf"]


# The layout of versions 2 and 3 (2 had no `stemmed` column): plain rowids, files without source, pages and time.
OLD_LAYOUT = """
CREATE TABLE files (container TEXT NOT NULL, file TEXT NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (container, file));
CREATE TABLE chunks (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, container TEXT NOT NULL, file TEXT NOT NULL, page INTEGER,
    doc_date TEXT, tabular INTEGER NOT NULL DEFAULT 0, tags TEXT NOT NULL DEFAULT '[]', context TEXT NOT NULL,
    text TEXT NOT NULL, scope TEXT NOT NULL, vector BLOB, stemmed TEXT);
CREATE INDEX chunks_by_file ON chunks (container, file);
CREATE TABLE chunk_tags (chunk INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX chunk_tags_by_value ON chunk_tags (key, value, chunk);
CREATE INDEX chunk_tags_by_chunk ON chunk_tags (chunk);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    context, text, scope, content='chunks', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
"""


@pytest.mark.parametrize("version", [2, 3])
async def test_an_index_from_a_previous_layout_keeps_its_chunks_and_never_reuses_their_ids(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(OLD_LAYOUT)
    insert_chunk(db, chunk("c", "a.pdf", "vision care covers glasses every two years", page=4), None)
    db.execute("INSERT INTO files (container, file, fingerprint) VALUES ('c', 'a.pdf', 'v1')")
    if version == 2:
        db.execute("ALTER TABLE chunks DROP COLUMN stemmed")
    db.execute(f"PRAGMA user_version = {version}")
    [(old_id,)] = db.execute("SELECT rowid FROM chunks").fetchall()
    db.close()
    reopened = LocalRetriever(path, score_gap=0.0)
    [hit] = await reopened.search("glasses vision", Scope(container="c"), top=5)
    [listed] = await reopened.files("c")
    await reopened.delete_file("c", "a.pdf")  # the highest id is free now: a plain rowid would give it out again
    await put(reopened, chunk("d", "b.pdf", "glasses frames are not covered", page=1))
    [found] = await reopened.search("glasses", Scope(container="d"), top=5)
    await reopened.close()
    assert (hit.file, hit.page) == ("a.pdf", 4)
    assert (listed.file, listed.passages, listed.source) == ("a.pdf", 1, None)
    assert found.file == "b.pdf"
    [(new_id,)] = sqlite3.connect(path).execute("SELECT rowid FROM chunks").fetchall()
    assert new_id > old_id


async def test_a_file_set_back_by_an_older_folio_opens_and_one_from_a_newer_folio_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    index = LocalRetriever(path, score_gap=0.0)
    await put(index, chunk("c", "a.pdf", "vision care covers glasses"))
    await index.close()
    for version, works in ((3, True), (99, False)):  # an older Folio sets the version back and changes nothing
        db = sqlite3.connect(path)
        db.execute(f"PRAGMA user_version = {version}")
        db.commit()
        db.close()
        reopened = LocalRetriever(path, score_gap=0.0)
        if works:
            assert [hit.file for hit in await reopened.search("glasses", Scope(container="c"), top=5)] == ["a.pdf"]
        else:
            with pytest.raises(SearchUnavailable, match="newer Folio"):
                await reopened.search("glasses", Scope(container="c"), top=5)
        await reopened.close()


async def test_a_word_the_documents_never_use_is_searched_by_its_common_synonyms(tmp_path: Path) -> None:
    # The handbook never says "wrong": the passage the question means says "false or misleading".
    passages = {
        1: "Claim forms are processed within thirty days.",
        2: "Send the form to the benefits office by mail.",
        9: "Intentionally false or misleading statements void the plan.",
    }
    question = "what happens if something on my claim form is wrong?"
    assert 9 in await pages_found(tmp_path, "handbook.pdf", passages, question, top=3)


async def test_what_a_question_needs_finds_the_passage_saying_it_is_required(tmp_path: Path) -> None:
    # People ask what they "need"; policies say what is "required" (the shared corpus: "What need for
    # pre-authorization in Northwind Standard Benefits?" and the clinical review page's "may require pre-authorization").
    passages = {
        1: "You need your member card at every visit.",
        2: "An MRI scan is covered once a year at any clinic of the network.",
        3: "An MRI scan requires a referral from your doctor, written and signed, before the visit to the clinic.",
    }
    assert await pages_found(tmp_path, "plan.pdf", passages, "What do I need before an MRI scan?", top=2) == [3, 2]


async def test_words_another_process_indexed_are_known_to_a_running_search_at_once(tmp_path: Path) -> None:
    # `folio serve` searches while `folio index` (another connection) adds a file: a misspelling of the new file's
    # word is corrected at the next search, not a minute later.
    serving = LocalRetriever(tmp_path / "index.sqlite", score_gap=0.0)
    indexing = LocalRetriever(tmp_path / "index.sqlite", score_gap=0.0)
    await put(serving, chunk("c", "old.pdf", "Opening hours are posted at the door."))
    assert await serving.search("opening hours", Scope(container="c"), top=1)
    await put(indexing, chunk("c", "new.pdf", "The hippopotamus enclosure opens at nine."))
    found = await serving.search("hippopotamuss", Scope(container="c"), top=1)
    await serving.close()
    await indexing.close()
    assert [hit.file for hit in found] == ["new.pdf"]


async def test_what_is_a_word_finds_the_passage_that_says_what_it_is(tmp_path: Path) -> None:
    passages = {
        3: "Check the coinsurance for specialists before a visit.",
        4: "Coinsurance is the share of a bill you pay once the deductible is met, such as 20%.",
    }
    assert await pages_found(tmp_path, "plan.pdf", passages, "What is coinsurance?", top=2) == [4, 3]


async def test_a_search_of_the_only_container_still_keeps_to_it_once_another_process_adds_one(tmp_path: Path) -> None:
    # A scope holding the whole index searches without its container in the MATCH; a container added by another
    # connection meanwhile must not leak into its results.
    serving = LocalRetriever(tmp_path / "index.sqlite", score_gap=0.0)
    indexing = LocalRetriever(tmp_path / "index.sqlite", score_gap=0.0)
    await put(serving, chunk("c", "mine.pdf", "Glasses are reimbursed once a year."))
    assert [hit.file for hit in await serving.search("glasses", Scope(container="c"), top=5)] == ["mine.pdf"]
    await put(indexing, chunk("d", "theirs.pdf", "Glasses and glasses and more glasses for everyone."))
    found = await serving.search("glasses", Scope(container="c"), top=5)
    both = await serving.search("glasses", Scope(containers=("c", "d")), top=5)
    await serving.close()
    await indexing.close()
    assert [hit.file for hit in found] == ["mine.pdf"]
    assert sorted(hit.file for hit in both) == ["mine.pdf", "theirs.pdf"]
