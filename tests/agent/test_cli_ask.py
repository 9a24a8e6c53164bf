"""`folio ask --json` and `folio chat` end to end: the real CLI, the local index of ../shared/corpus, the fake model."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest

from bot.cli import main
from bot.cli.chat import chat
from bot.config import load_settings
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, rewrite, search, shown_sources, tools

PLAN = "Northwind_Standard_Benefits_Details.pdf"
QUESTION = "What does the Northwind Standard plan not cover for clinical trials, and which hearing care is covered?"
PARTS = {  # the search the model makes for each part -> a word its passage must contain
    "Northwind Standard clinical trials travel expenses not covered": "clinical trial",
    "Northwind Standard hearing care services covered": "hearing",
}


def first_ref_mentioning(output: str, words: str) -> str:
    """The ref of the first source in a search output whose content mentions `words`."""
    for source in shown_sources(output):
        if words in source["content"].lower():
            return source["ref"]
    raise AssertionError(f"no passage about {words!r} in:\n{output[:2000]}")


def decompose_then_answer(request: Request) -> Step:
    """The fake model: first rewrite and search each part, then answer citing the passages it was shown."""
    if request.previous is None:
        return tools(rewrite(QUESTION), *(search(query) for query in PARTS))
    outputs = list(request.tool_outputs.values())[1:]  # after the rewrite's echo
    trials, hearing = (first_ref_mentioning(out, words) for out, words in zip(outputs, PARTS.values()))
    return reply(
        f"It does not cover travel to attend a clinical trial [{trials}]. "
        f"Hearing exams and hearing aids are covered [{hearing}]."
    )


@pytest.fixture
def folio_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corpus_index: Path, fake_model: FakeResponses) -> None:
    """Settings for a user with a model server and the shared corpus indexed in container "benefits"."""
    data = tmp_path / ".folio"
    data.mkdir()
    shutil.copy(corpus_index, data / "index.sqlite")  # the session's index is shared: work on a copy
    monkeypatch.setenv("FOLIO_DATA_DIR", str(data))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_model.base_url)
    monkeypatch.setenv("FOLIO_DOCS_BASE_URL", "https://docs.example/benefits/")


def test_ask_json_answers_a_multi_part_question_with_page_links(
    folio_env: None, fake_model: FakeResponses, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_model.respond_with(decompose_then_answer)

    code = main(["ask", QUESTION, "--container", "benefits", "--json"])

    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["answerable"] and not result["cap_hit"]
    assert [(c["name"], c["arguments"]["query"]) for c in result["tool_calls"]] == [
        ("rewrite_query", QUESTION),
        *(("search_documents", query) for query in PARTS),
    ]
    cited = {(c["file"], c["page"]) for c in result["citations"]}
    assert cited == {(PLAN, 24), (PLAN, 30)}  # the pages ground_truth.jsonl gives for these two questions
    for citation in result["citations"]:
        assert citation["url"] == f"https://docs.example/benefits/{PLAN}#page={citation['page']}"
        assert f"[{citation['label']}]" in result["answer"]
    assert result["response_ids"] == [request.response_id for request in fake_model.requests]
    assert result["usage"] == {"input_tokens": 240, "output_tokens": 60}
    searched = fake_model.requests[0].body["input"]
    assert searched == [{"role": "user", "content": QUESTION}]


def test_ask_without_a_model_quotes_passages(
    monkeypatch: pytest.MonkeyPatch, folio_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")

    code = main(["ask", "Which hearing care services are covered?", "--container", "benefits"])

    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("(No model is set up")
    # The question names no plan, so either Northwind plan's hearing care page may come first.
    plan = r"(Northwind_\w+_Benefits_Details\.pdf)"
    assert re.search(rf"^\[1\] {plan}, page \d+  https://docs\.example/benefits/\1#page=\d+$", out, re.M)


def test_chat_chains_follow_ups_and_lists_citations(folio_env: None, fake_model: FakeResponses) -> None:
    fake_model.script(
        tools(search("hearing care")),
        reply("Hearing aids are covered [S1]."),
        tools(search("hearing aid limits")),
        reply("Within limits [S1][S2]."),
    )
    typed = io.StringIO("Is hearing care covered?\n\nAnd how often?\nexit\nnever asked\n")
    shown = io.StringIO()

    code = chat(load_settings(None), container="benefits", input_stream=typed, output=shown)

    assert code == 0
    transcript = shown.getvalue()
    assert "> Is hearing care covered?\nHearing aids are covered [1]." in transcript
    assert "> And how often?\nWithin limits [1][2]." in transcript
    assert re.search(r"^\[2\] \S+\.pdf, page \d+  https://docs\.example/benefits/\S+#page=\d+$", transcript, re.M)
    assert len(fake_model.requests) == 4 and fake_model.pending == 0  # "never asked" came after exit
    assert fake_model.requests[2].body["previous_response_id"] == fake_model.requests[1].response_id


class RemovesCitedFile(io.StringIO):
    """The person's typing: after the first answer, and before the next question is read, someone runs
    `folio remove` on the file that answer cited (in another terminal, as it were)."""

    def __init__(self, typed: str, transcript: io.StringIO) -> None:
        super().__init__(typed)
        self.transcript = transcript
        self.removed: str | None = None

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        cited = re.search(r"^\[1\] (\S+\.pdf), page", self.transcript.getvalue(), re.M)
        if cited and self.removed is None:
            self.removed = cited.group(1)
            assert main(["remove", self.removed, "--container", "benefits"]) == 0
        return super().readline(size)


def test_chat_forgets_a_document_removed_mid_chat(folio_env: None, fake_model: FakeResponses) -> None:
    fake_model.script(
        tools(search("hearing care")),
        reply("Hearing aids are covered [S1]."),
        reply("Yes, covered [S1]."),  # the removed passage, cited again from the model's context
        reply("I can no longer find that in the documents."),  # the correction round: S1 is no source any more
    )
    shown = io.StringIO()
    typed = RemovesCitedFile("Is hearing care covered?\nAre hearing aids covered too?\nexit\n", shown)

    code = chat(load_settings(None), container="benefits", input_stream=typed, output=shown)

    assert code == 0 and typed.removed is not None
    follow_up = shown.getvalue().split("> Are hearing aids covered too?\n", 1)[1]
    assert typed.removed not in follow_up and "[1]" not in follow_up  # seen: "[1] <the removed file>, page ..."
    assert "previous_response_id" not in fake_model.requests[2].body  # its passages left the model's context
