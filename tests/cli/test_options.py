"""Options that agree: `--tag` takes key=value and key:value in every command, and says so; `folio eval` on
documents its container does not hold says so instead of scoring 0.00."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.cli import main

TAGGED = ("search", "ask", "chat", "eval", "index")


@pytest.fixture
def data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("FOLIO_DATA_DIR", str(folder))
    return folder


@pytest.mark.parametrize("tag", ["year=2025", "year:2025", "Year = 2025"])
def test_both_tag_forms_narrow_a_search(data: Path, tag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "refund window monthly plans", "--tag", tag, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert {hit["file"] for hit in found} == {"refund_policy_2025.pdf"}


def test_a_bad_tag_names_both_forms(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "refund window", "--tag", "year"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "folio: --tag 'year' is not a tag: write key=value or key:value (for example --tag department=finance).\n"
    )


@pytest.mark.parametrize("command", TAGGED)
def test_every_command_documents_the_tag_form_it_takes(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--tag KEY=VALUE" in shown and "key:value" not in shown.replace("key=value (key:value works too)", "")


def test_the_tag_form_is_documented_once_for_all_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "Tags are written key=value in every command (key:value works too" in capsys.readouterr().out


def golden(path: Path, *files: str) -> Path:
    lines = [{"question": f"What does {file} say?", "truth": f"It says so. [{file}#page=1]"} for file in files]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path


def test_eval_of_documents_the_sample_does_not_hold_says_which_container_to_name(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = golden(tmp_path / "golden.jsonl", "Benefit_Options.pdf", "Northwind_Standard_Benefits_Details.pdf")

    assert main(["eval", str(questions), "--retrieval-only"]) == 2

    captured = capsys.readouterr()
    assert captured.out == ""  # no table of zeros
    assert "None of the documents this golden file cites (Benefit_Options.pdf, Northwind_Standard" in captured.err
    assert "is indexed in sample" in captured.err and "--container benefits" in captured.err


def test_eval_warns_of_the_documents_it_lacks_and_scores_the_rest(
    data: Path, tmp_path: Path, corpus_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data.mkdir()
    shutil.copy(corpus_index, data / "index.sqlite")
    questions = golden(tmp_path / "golden.jsonl", "Benefit_Options.pdf", "moved_away.pdf")

    assert main(["eval", str(questions), "--retrieval-only", "--container", "benefits"]) == 0

    captured = capsys.readouterr()
    assert "warning: 1 document(s) the golden file cites are not indexed in benefits: moved_away.pdf." in captured.err
    assert "retrieval-only eval" in captured.out
