"""`folio eval` end to end: real turns through the agent, the fake Responses API and the local index of the
shared corpus, with scripted answers whose scores are known in advance."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.cli import main
from tests.fakes.openai_responses import FakeResponses, Request, Step, error, reply, search, shown_sources, tools

BALANCE = "What protection does Contoso offer against balance billing?"
DEDUCTIBLE = "What is the calendar year deductible of Northwind Standard?"
VACATION = "How many paid vacation days does a new Contoso employee get?"
BROKEN = "What does Northwind Standard say about hearing aids?"
STANDARD = "Northwind_Standard_Benefits_Details.pdf"
GOLDEN = [
    {"question": BALANCE, "truth": f"Balance billing protection. [{STANDARD}#page=7]"},
    {"question": DEDUCTIBLE, "truth": f"$2,000 per individual. [{STANDARD}#page=13]"},
    {"question": VACATION, "unanswerable": True},
    {"question": BROKEN, "truth": f"Hearing aids. [{STANDARD}#page=30]"},
]


def refs_by_page(request: Request) -> dict[tuple[str, int], str]:
    """(file, page) -> S# of every passage the tool outputs showed the model."""
    found: dict[tuple[str, int], str] = {}
    for output in request.tool_outputs.values():
        for source in shown_sources(output):
            found.setdefault((source["title"], source["page"]), source["ref"])
    return found


def model(request: Request) -> Step:
    """The scripted model: search the question once, then answer by the question that was searched; as a judge,
    grade every answer 4 for groundedness and 5 for correctness."""
    if str(request.body.get("instructions", "")).startswith("You grade one answer"):
        return reply('{"groundedness": 4, "correctness": 5, "reason": "supported by the cited page"}')
    if not request.tool_outputs:
        if request.user_text == BROKEN:
            return error(500)
        return tools(search(request.user_text))
    asked = json.loads(request.previous_calls()[0]["arguments"])["query"]
    if asked == BALANCE:
        shown = refs_by_page(request)
        right = shown[(STANDARD, 7)]
        wrong = next(ref for (file, page), ref in shown.items() if (file, page) != (STANDARD, 7))
        return reply(f"Balance billing protection covers in-network visits [{right}]; see also [{wrong}].")
    return reply("[NOT_IN_DOCUMENTS] The documents I can search do not say.")


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in GOLDEN))
    return path


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, corpus_index: Path) -> FakeResponses:
    with FakeResponses() as fake:
        fake.respond_with(model)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("FOLIO_CODE_INTERPRETER", "false")
        monkeypatch.setenv("FOLIO_DATA_DIR", str(corpus_index.parent))
        yield fake


def test_a_full_eval_scores_known_answers(
    fake_model: FakeResponses, golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["eval", str(golden), "--container", "benefits", "--json", "--out", str(tmp_path / "run")])
    printed = json.loads(capsys.readouterr().out)
    assert status == 0 and fake_model.problems == []
    summary = printed["full"]
    assert (summary["questions"], summary["answerable"], summary["unanswerable"]) == (4, 3, 1)
    assert summary["errors"] == 1  # the model failed on BROKEN: recorded, and the run went on
    assert summary["citations_matched"] == pytest.approx(1 / 3)  # 1.0 on BALANCE, 0 on the refusal and the error
    assert summary["precision"] == 0.5  # BALANCE cites its truth page and one other
    assert summary["any_citation"] == 0.5
    assert summary["fabricated"] == 0
    assert summary["refusal_rate"] == 1.0 and summary["wrong_refusals"] == 1
    assert summary["searches"] == 1.0 and summary["iterations"] == 2.0
    assert summary["input_tokens"] == 6 * 120  # two model calls for each of the three questions that ran
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    by_question = {result["question"]: result for result in results}
    assert by_question[BALANCE]["outcome"]["cited"][0] == f"{STANDARD}#page=7"
    assert by_question[BROKEN]["outcome"]["error"].startswith("ModelUnavailable")
    assert by_question[DEDUCTIBLE]["wrong_refusal"] and by_question[VACATION]["refused"]


def test_a_run_compares_with_a_saved_baseline(
    fake_model: FakeResponses, golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["eval", str(golden), "--container", "benefits", "--limit", "1", "--out", str(tmp_path / "before")])
    capsys.readouterr()
    again = ["eval", str(golden), "--container", "benefits", "--limit", "1", "--baseline", str(tmp_path / "before")]
    status = main(again)
    shown = capsys.readouterr().out
    assert status == 0
    assert "| citations_matched (reference 0.42) | 1.00 | 1.00 |" in shown
    assert "no question changed its score." in shown


def test_retrieval_only_prints_hits_without_a_model(
    corpus_index: Path, monkeypatch: pytest.MonkeyPatch, golden: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FOLIO_DATA_DIR", str(corpus_index.parent))
    status = main(["eval", str(golden), "--container", "benefits", "--retrieval-only"])
    shown = capsys.readouterr().out
    assert status == 0
    assert "| questions (skipped unanswerable) | 3 (1) |" in shown
    assert re.search(r"\| hit@10 \| (0\.67|1\.00) \|", shown)


def test_a_full_eval_without_a_model_says_how_to_set_one(golden: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(golden)]) == 2
    assert "A full eval needs a model: set OPENAI_API_KEY" in capsys.readouterr().err


def test_a_judge_model_grades_each_answer(
    fake_model: FakeResponses, golden: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["eval", str(golden), "--container", "benefits", "--limit", "1", "--judge", "judge-model", "--json"])
    summary = json.loads(capsys.readouterr().out)["full"]
    assert status == 0 and fake_model.problems == []
    assert (summary["groundedness"], summary["correctness"]) == (4.0, 5.0)
    judged = [r for r in fake_model.requests if r.body["model"] == "judge-model"]
    assert len(judged) == 1 and "Balance billing protection covers" in judged[0].user_text


def test_model_calls_are_counted_when_the_model_service_keeps_no_responses(
    fake_model: FakeResponses,
    golden: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # FOLIO_MODEL_STATE=client: nothing is stored (store: false), so no call leaves a response id to count by.
    monkeypatch.setenv("FOLIO_MODEL_STATE", "client")
    fake_model.respond_with(
        lambda request: (
            reply("[NOT_IN_DOCUMENTS] Not said.") if request.tool_outputs else tools(search(request.user_text))
        )
    )
    status = main(
        ["eval", str(golden), "--container", "benefits", "--json", "--limit", "1", "--out", str(tmp_path / "run")]
    )
    summary = json.loads(capsys.readouterr().out)["full"]
    assert status == 0 and fake_model.problems == [] and fake_model.stored_ids() == []
    assert summary["iterations"] == 2.0  # the search call and the answer
