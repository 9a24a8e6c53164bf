"""An `--out` folder: `summary.json` (a RunRecord) and `results.jsonl` (one result per question)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from bot.errors import InvalidInput
from bot.evaluation.report import RunRecord
from bot.evaluation.scoring import QuestionResult, RetrievalResult

SUMMARY = "summary.json"
RESULTS = "results.jsonl"

Result = QuestionResult | RetrievalResult


def save_run(folder: Path, record: RunRecord, results: Sequence[Result]) -> None:
    """Write the record and the per-question results (replacing an earlier run in the same folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(result.model_dump_json() + "\n" for result in results)
    (folder / RESULTS).write_text(lines, encoding="utf-8")
    (folder / SUMMARY).write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")


def load_run(folder: Path) -> tuple[RunRecord, list[Result]]:
    """Read a folder written by `save_run`; InvalidInput when it is missing or not one."""
    try:
        record = RunRecord.model_validate_json((folder / SUMMARY).read_text(encoding="utf-8"))
        kind = QuestionResult if record.kind == "full" else RetrievalResult
        lines = (folder / RESULTS).read_text(encoding="utf-8").splitlines()
        results: list[Result] = [kind.model_validate_json(line) for line in lines if line.strip()]
    except OSError as exc:
        raise InvalidInput(
            f"{folder} holds no saved eval run ({exc.strerror}): pass a folder written by --out."
        ) from exc
    except ValidationError as exc:
        raise InvalidInput(f"{folder} holds an eval run this version cannot read: {exc.errors()[0]['msg']}.") from exc
    return record, results
