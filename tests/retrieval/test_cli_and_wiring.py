"""`folio index`, `folio search` and the wiring behind them, run in-process as a user runs them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.app import SAMPLE_CORPUS
from bot.app.builders import retriever as build_retriever
from bot.app.sample import ensure_sample_index
from bot.cli import main
from bot.config import load_settings
from bot.errors import ConfigurationError
from bot.models import Scope, Tag
from bot.retrieval.azure import AzureSearchRetriever
from bot.retrieval.local import LocalRetriever


def test_index_then_search_json_returns_northwind_pages(shared_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = shared_dir / "corpus"
    pdfs = [str(corpus / "Northwind_Standard_Benefits_Details.pdf"), str(corpus / "PerksPlus.pdf")]
    assert main(["index", *pdfs, "--container", "benefits"]) == 0
    assert "2 files indexed" in capsys.readouterr().out
    assert main(["search", "hearing aids", "--container", "benefits", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert results and results[0]["file"] == "Northwind_Standard_Benefits_Details.pdf"
    assert all(isinstance(item["page"], int) for item in results)
    assert {"file", "page", "container", "tags", "score", "text"} <= set(results[0])
    assert main(["index", *pdfs, "--container", "benefits"]) == 0
    assert "2 unchanged" in capsys.readouterr().out


def test_search_with_tags_and_a_text_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.md").write_text("Expense claims are paid monthly.", encoding="utf-8")
    (tmp_path / "b.md").write_text("Expense claims need receipts.", encoding="utf-8")
    assert main(["index", str(tmp_path / "a.md"), "--container", "fin", "--tag", "year=2025"]) == 0
    assert main(["index", str(tmp_path / "b.md"), "--container", "fin", "--tag", "year=2026"]) == 0
    capsys.readouterr()
    assert main(["search", "expense claims", "--container", "fin", "--tag", "year=2026", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert [(item["file"], item["page"], item["tags"]) for item in results] == [("b.md", None, ["year:2026"])]


def test_an_empty_container_says_how_to_fill_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "anything", "--container", "nothing-here", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Container 'nothing-here' holds no documents. Containers here: sample (" in captured.err
    assert "folio index PATH --container nothing-here" in captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "   ", "--container", "sample"], "empty"),
        (["search", "x", "--container", "sample", "--tag", "nokey"], "key:value"),
        (["index", "missing.pdf", "--container", "c"], "does not exist"),
        (["index", ".", "--container", "c", "--date", "31/12/2025"], "YYYY-MM-DD"),
    ],
)
def test_bad_input_is_a_clear_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_data_dir_that_cannot_be_written_names_the_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FOLIO_DATA_DIR", str(blocker / "data"))
    with pytest.raises(ConfigurationError, match="FOLIO_DATA_DIR"):
        build_retriever(load_settings(None), embedder=None, credential=None)


def test_the_backend_follows_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLIO_DATA_DIR", str(tmp_path / "data"))
    local = build_retriever(load_settings(None), embedder=None, credential=None)
    assert isinstance(local, LocalRetriever) and local.path == tmp_path / "data" / "index.sqlite"
    monkeypatch.setenv("AZURE_SEARCH_ENDPOINT", "https://example.search.windows.net")
    monkeypatch.setenv("AZURE_SEARCH_KEY", "key")
    remote = build_retriever(load_settings(None), embedder=None, credential=None)
    assert isinstance(remote, AzureSearchRetriever) and remote.index_name == "folio"
    asyncio.run(remote.close())


async def test_the_sample_corpus_is_indexed_once_with_its_catalog_tags(tmp_path: Path) -> None:
    index = LocalRetriever(tmp_path / "index.sqlite")
    await ensure_sample_index(index, None)
    count = await index.count("sample")
    assert count > 0
    await ensure_sample_index(index, None)
    assert await index.count("sample") == count
    tags = (Tag(key="year", value="2026"), Tag(key="doc_type", value="policy"))
    results = await index.search("refund window monthly plan", Scope(container="sample", tags=tags), top=5)
    await index.close()
    assert results and {hit.file for hit in results} == {"refund_policy_2026.pdf"}
    assert all(hit.doc_date == "2026-01-12" for hit in results)


async def test_only_the_catalogued_sample_files_are_indexed(tmp_path: Path) -> None:
    index = LocalRetriever(tmp_path / "index.sqlite")
    await ensure_sample_index(index, None)
    results = await index.search("fictitious regenerate sample documents", Scope(container="sample"), top=10)
    await index.close()
    assert "README.md" not in {hit.file for hit in results}
    assert {hit.file for hit in results} <= {path.name for path in SAMPLE_CORPUS.glob("*.pdf")}


def test_embeddings_can_come_from_another_server_than_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 23: FOLIO_EMBEDDING_BASE_URL / FOLIO_EMBEDDING_API_KEY, with no model configured at all."""
    from tests.fakes.openai_embeddings import API_KEY, FakeEmbeddings

    (tmp_path / "a.md").write_text("Hearing aids are covered every three years.", encoding="utf-8")
    with FakeEmbeddings() as server:
        for name, value in {
            "FOLIO_EMBEDDING_MODEL": "e5-passage",
            "FOLIO_EMBEDDING_QUERY_MODEL": "e5-query",
            "FOLIO_EMBEDDING_DIMENSIONS": "32",
            "FOLIO_EMBEDDING_BASE_URL": server.base_url,
            "FOLIO_EMBEDDING_API_KEY": API_KEY,
            "FOLIO_DATA_DIR": str(tmp_path / "data"),
        }.items():
            monkeypatch.setenv(name, value)
        assert main(["index", str(tmp_path / "a.md"), "--container", "hr"]) == 0
        capsys.readouterr()
        assert main(["search", "hearing aids", "--container", "hr", "--json"]) == 0
        assert server.problems == []
    assert [item["file"] for item in json.loads(capsys.readouterr().out)] == ["a.md"]
    models = [request["model"] for request in server.requests]  # passages (the sample corpus's too), then the query
    assert models[-1] == "e5-query" and set(models[:-1]) == {"e5-passage"}
