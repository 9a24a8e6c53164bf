"""The chaos run of benchmarks/chaos.py, short: a redeploy under load loses no question and answers none twice.

`folio serve --workers 2` against a real redis-server (append-only file), the bench's fake Slack and fake model, and
Slack's retry schedule (compressed 10 times: at once, 6 s, 30 s); Folio is started again when it exits, as Docker's
restart policy does. About a minute: the one process test of issue 25 item 5 in the default run. The full table
(worker SIGKILL, Redis SIGKILL, model slow and 500) is `python benchmarks/chaos.py`, figures in benchmarks/RESULTS.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.chaos import Plan, run
from bot.evaluation.golden import load_golden

pytestmark = pytest.mark.slow  # folio serve --workers 2, a redis-server, the fakes: `dev.py test --quick` skips it


def test_a_redeploy_under_load_loses_no_question_and_answers_none_twice(shared_dir: Path) -> None:
    corpus = shared_dir / "corpus"
    questions = [q.question for q in load_golden(corpus / "ground_truth.jsonl")]

    counts = run(Plan(fault="redeploy", threads=3, duration=9, compress=10, tail=3, patience=8), questions, corpus)

    assert counts.restarts == 1, counts  # the redeploy happened: SIGTERM, exit, started again
    assert counts.asked >= 6, counts
    assert (counts.acked, counts.answered, counts.lost, counts.duplicates) == (counts.asked, counts.asked, 0, 0), counts
