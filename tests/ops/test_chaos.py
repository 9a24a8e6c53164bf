"""The chaos run of benchmarks/chaos.py, short: a worker SIGKILLed, then a redeploy, under load: no question lost,
none answered twice, and only the redeploy restarts Folio (the dead worker is replaced while the other serves).

`folio serve --workers 2` against a real redis-server (append-only file), the bench's fake Slack and fake model, and
Slack's retry schedule (compressed 10 times: at once, 6 s, 30 s); Folio is started again when it exits, as Docker's
restart policy does. About a minute: the one process test of issues 25 and 32 in the default run. The full tables
(each fault alone, and every fault in one run: `--fault all-faults`) are `python benchmarks/chaos.py`, figures in
benchmarks/RESULTS.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.chaos import Plan, Step, run
from bot.evaluation.golden import load_golden

pytestmark = pytest.mark.slow  # folio serve --workers 2, a redis-server, the fakes: `dev.py test --quick` skips it


def test_a_worker_kill_then_a_redeploy_under_load_lose_no_question_and_answer_none_twice(shared_dir: Path) -> None:
    corpus = shared_dir / "corpus"
    questions = [q.question for q in load_golden(corpus / "ground_truth.jsonl")]
    faults = (Step(3, "worker-kill"), Step(6, "redeploy"))

    plan = Plan(fault="worker-kill, redeploy", steps=faults, threads=3, duration=9, compress=10, tail=3, patience=8)
    counts = run(plan, questions, corpus)

    assert counts.restarts == 1, counts  # the redeploy (SIGTERM, exit, started again); not the worker's death
    assert any("SIGKILL worker" in note for note in counts.notes), counts
    assert counts.asked >= 6, counts
    assert (counts.acked, counts.answered, counts.lost, counts.duplicates) == (counts.asked, counts.asked, 0, 0), counts
