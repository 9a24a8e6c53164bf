"""The pure pieces: OData filters (checked by the fake's evaluator), FTS5 expressions, query plans, hybrid fusion."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bot.errors import InvalidInput
from bot.models import Scope, Tag
from bot.retrieval.embedders import normalise
from bot.retrieval.filters import equals, file_filter, literal, scope_filter
from bot.retrieval.fts import match_expression, phrases, scope_tokens, scoped_match, terms
from bot.retrieval.local import LocalRetriever
from bot.retrieval.rerank import fuse_rankings
from bot.retrieval.vocabulary import Vocabulary, plan_query
from tests.fakes.odata import FilterError, compile_filter
from tests.retrieval.helpers import HashEmbedder, chunk

FIELDS = {
    "container": {"type": "Edm.String", "filterable": True},
    "file": {"type": "Edm.String", "filterable": True},
    "tags": {"type": "Collection(Edm.String)", "filterable": True},
}
NASTY = ["' or 1 eq 1 or '", "a,b c", "Zürich ✓", "it's", "x') or (container ne 'x", "''", "tags/any(t: true)"]


def test_literals_double_their_quotes() -> None:
    assert literal("O'Brien") == "'O''Brien'"
    assert literal("' or 1 eq 1 or '") == "''' or 1 eq 1 or '''"


def test_fields_come_from_the_allow_list_only() -> None:
    with pytest.raises(ValueError):
        equals("container eq 'a' or content", "x")


def test_the_container_clause_is_first_and_keys_group_their_values() -> None:
    scope = Scope(
        container="legal",
        tags=(Tag(key="year", value="2025"), Tag(key="dept", value="hr"), Tag(key="year", value="2026")),
    )
    assert scope_filter(scope) == (
        "container eq 'legal' and (tags/any(t: t eq 'year:2025') or tags/any(t: t eq 'year:2026'))"
        " and tags/any(t: t eq 'dept:hr')"
    )


@pytest.mark.parametrize("value", NASTY)
def test_any_value_filters_exactly_that_value_inside_the_container(value: str) -> None:
    documents = [
        {"container": value, "file": "a.pdf", "tags": [f"k:{value}"]},
        {"container": "other", "file": "a.pdf", "tags": [f"k:{value}"]},
        {"container": value, "file": "b.pdf", "tags": ["k:else"]},
    ]
    keep = compile_filter(scope_filter(Scope(container=value, tags=(Tag(key="k", value=value),))), FIELDS)
    assert [doc["file"] for doc in documents if keep(doc)] == ["a.pdf"]
    only_file = compile_filter(file_filter(value, "b.pdf"), FIELDS)
    assert [doc["container"] for doc in documents if only_file(doc)] == [value]


def test_the_fake_refuses_a_filter_that_is_not_escaped() -> None:
    with pytest.raises(FilterError):
        compile_filter("container eq 'it's'", FIELDS)


def test_a_malformed_tag_key_never_reaches_a_filter() -> None:
    with pytest.raises(InvalidInput):
        scope_filter(Scope(container="c", tags=(Tag(key="Year) or (x", value="1"),)))


@pytest.mark.parametrize("query", NASTY + ['"', "NEAR(a b, 3)", "a:b", "x*", "^y", "-z", "AND OR NOT", "{context}: q"])
def test_every_match_expression_is_valid_fts5(query: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(context, text, scope, tokenize='porter unicode61')")
    db.execute("INSERT INTO t VALUES ('doc', ?, ?)", (f"text with {query}", scope_tokens("c", ["k:v"])))
    expression = match_expression(terms(query), phrases(query))
    if expression is None:  # nothing searchable in it (only punctuation)
        return
    scoped = scoped_match(expression, "c", {"k": ("v",)})
    assert db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (scoped,)).fetchone()[0] == 1
    other = scoped_match(expression, "other", {})
    assert db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (other,)).fetchone()[0] == 0


def test_hyphenated_words_and_neighbours_become_phrases() -> None:
    assert "in network" in phrases("what is in-network care?")
    assert "hearing aids" in phrases("are hearing aids covered")


def test_the_plan_corrects_misspellings_and_drops_words_found_everywhere() -> None:
    vocabulary = Vocabulary({"hear": 5, "northwind": 95, "aid": 4, "plan": 30}, 100)
    stems = {"hearin": "hearin", "northwind": "northwind", "aids": "aid", "plan": "plan"}
    plan = plan_query("hearin aids northwind plan", stems, vocabulary)
    assert "hear" in plan.words and "hearin" in plan.words and "aids" in plan.words
    assert "northwind" not in plan.words and "northwind" not in [word for word, _ in plan.later]
    assert [word for word, _ in plan.later] == []  # plan (30%) is too common to score
    assert "hearin aids" in plan.phrases


async def test_a_misspelled_question_still_finds_its_page(corpus_index: Path) -> None:
    retriever = LocalRetriever(corpus_index)
    question = "What typs of hearin care servises are covered?"
    results = await retriever.search(question, Scope(container="benefits"), top=5)
    await retriever.close()
    assert any("hearing" in hit.text.lower() for hit in results)


def test_rank_fusion_rewards_agreement() -> None:
    fused = fuse_rankings([1, 2, 3], [3, 1, 4])
    assert list(fused)[:2] == [1, 3] and fused[1] > fused[3] > fused[2]


def test_a_fusion_weight_tips_the_balance_between_rankings() -> None:
    assert list(fuse_rankings([1, 2], [2, 1])) == [1, 2]  # equal weights: ties keep the keyword ranking's order
    assert list(fuse_rankings([1, 2], [2, 1], weights=(1.0, 1.5))) == [2, 1]


class NarrowEmbedder(HashEmbedder):
    """Vectors with a large part in common, so every cosine sits between about 0.8 and 1, as e5's do."""

    async def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        vectors = await super().embed(texts, query=query)
        return normalise(vectors + 1.0 / np.sqrt(self.dimensions) * 2.0)


async def test_the_score_gap_cuts_weak_vector_matches_though_their_cosines_are_high(tmp_path: Path) -> None:
    index = LocalRetriever(tmp_path / "narrow.sqlite", embedder=NarrowEmbedder(), score_gap=0.5)
    await index.replace_file("c", "a.pdf", "v", [chunk("c", "a.pdf", "maternity leave is sixteen weeks")])
    filler = [chunk("c", "z.pdf", f"canteen menu item {n} soup", page=n) for n in range(1, 30)]
    await index.replace_file("c", "z.pdf", "v", filler)
    results = await index.search("maternity leave weeks", Scope(container="c"), top=5)
    await index.close()
    assert [hit.file for hit in results] == ["a.pdf"]


async def test_hybrid_search_embeds_once_and_keeps_to_the_scope(tmp_path: Path) -> None:
    embedder = HashEmbedder()
    index = LocalRetriever(tmp_path / "hybrid.sqlite", embedder=embedder, score_gap=0.0)
    a = chunk("c", "a.pdf", "maternity leave is sixteen weeks", tags=("y:1",))
    await index.replace_file("c", "a.pdf", "v", [a])
    await index.replace_file("c", "b.pdf", "v", [chunk("c", "b.pdf", "maternity leave policy", tags=("y:2",))])
    await index.replace_file("x", "s.pdf", "v", [chunk("x", "s.pdf", "maternity leave is sixteen weeks")])
    filler = [chunk("c", "z.pdf", f"canteen menu item {n} soup", page=n) for n in range(1, 30)]
    await index.replace_file("c", "z.pdf", "v", filler)
    assert len(embedder.calls) == 4  # one call per file written
    results = await index.search("maternity leave weeks", Scope(container="c"), top=5)
    assert [hit.file for hit in results][:2] == ["a.pdf", "b.pdf"]
    assert "s.pdf" not in [hit.file for hit in results]
    assert 0 < results[1].score < results[0].score < 0.04  # reciprocal-rank-fusion scores
    tagged = await index.search("maternity leave weeks", Scope(container="c", tags=(Tag(key="y", value="2"),)), top=5)
    assert [hit.file for hit in tagged] == ["b.pdf"]
    await index.close()
