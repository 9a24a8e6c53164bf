"""The bench's own arithmetic and wire shapes: signed events Slack's verifier accepts, figures from known timings."""

from __future__ import annotations

import json

from slack_sdk.signature import SignatureVerifier

from benchmarks.figures import ProcessUsage, bench_table, figures
from benchmarks.loadgen import LoadResult, TurnTiming, event_body, question_events, signed_headers


def test_events_are_signed_so_that_slacks_verifier_accepts_them() -> None:
    body = event_body(question_events("hi", ts="1.000001", thread_ts=None, user="U1")[0], event_id="Ev1")
    headers = signed_headers("secret", body, now=1_700_000_000)
    verifier = SignatureVerifier("secret", clock=type("Clock", (), {"now": lambda self: 1_700_000_010})())
    assert verifier.is_valid(body, headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"])
    assert not SignatureVerifier("other").is_valid(
        body, headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"]
    )


def test_a_mention_is_two_events_and_a_plain_reply_one_in_its_thread() -> None:
    mention = question_events("q", ts="1.000002", thread_ts=None, user="U1")
    reply = question_events("q", ts="1.000003", thread_ts="1.000002", user="U1", mention=False)
    assert [e["type"] for e in mention] == ["app_mention", "message"]
    assert mention[0]["text"].startswith("<@") and "thread_ts" not in mention[0]
    assert [(e["type"], e["thread_ts"], e["text"]) for e in reply] == [("message", "1.000002", "q")]
    envelope = json.loads(event_body(reply[0], event_id="Ev9"))
    assert envelope["type"] == "event_callback" and envelope["event_id"] == "Ev9"


def test_figures_from_known_timings() -> None:
    result = LoadResult(
        started_at=100.0,
        ended_at=130.0,
        acks=[0.010] * 98 + [0.200, 0.300],
        turns=[TurnTiming("t1", 100.0, 101.0), TurnTiming("t1", 101.0, 102.2), TurnTiming("t2", 100.5, None, "lost")],
        answers_by_thread={"t1": 3, "t2": 0},
        asked_by_thread={"t1": 2, "t2": 1},
    )
    usage = ProcessUsage(cpu_seconds=0.05, peak_rss_mb=120.0)
    found = figures(result, usage, threads=2, latency_ms=300, duration=10)
    assert found.turns == 2 and found.errors == 1 and found.duplicate_answers == 1
    assert found.events_per_s == 10.0  # 100 events over the 10 s of load
    assert round(found.turns_per_s, 6) == round(2 / 2.2, 6)  # answered turns over the time to the last answer
    assert found.injected_s == 0.9 and round(found.overhead_ratio or 0, 3) == round(1.1 / 0.9, 3)
    assert found.ack_p50_ms == 10.0 and found.ack_p99_ms == 200.0
    assert found.cpu_s_per_turn == 0.025
    table = bench_table(found)
    assert "| errors / duplicate answers | 1 / 1 |" in table and "- error: lost" in table
    assert "| no errors, no duplicate answers | 1 / 1 | **no** |" in table
    assert "| CPU per turn <= 12 ms | 25.0 ms | **no** |" in table
    assert "ack p99" not in table.split("| aim at this load")[1]  # an aim at 30 threads does not apply at 2
    assert all(cell.strip() for line in table.splitlines() if line.startswith("|") for cell in line.split("|")[1:-1])


def test_streaming_figures_from_known_timings() -> None:
    turns = [
        TurnTiming(
            "t1", 100.0, 103.0, first_step_at=100.2, first_search_at=100.9, first_text_at=102.05, first_token_at=102.0
        ),
        TurnTiming("t2", 100.0, 104.0, first_step_at=100.4, first_text_at=104.0, first_token_at=103.0),
    ]
    result = LoadResult(started_at=100.0, turns=turns, stream_text={"appends": 10, "text_appends": 4, "chars": 1200})
    found = figures(result, ProcessUsage(), threads=30, latency_ms=300, duration=10, token_delay_ms=20)
    stream = found.stream
    assert stream is not None and stream.streaming and stream.token_delay_ms == 20
    assert (round(stream.first_step_p50_ms), round(stream.first_step_p99_ms)) == (200, 400)
    assert round(stream.first_search_p99_ms) == 900  # the turn that never showed a search is not counted
    assert (round(stream.text_lag_p50_ms), round(stream.text_lag_p99_ms)) == (50, 1000)
    assert stream.appends_per_turn == 5 and stream.chars_per_text_append == 300
    table = bench_table(found)
    assert "| first visible step p50 / p99 | 200 / 400 ms |" in table
    assert "| first visible step p99 < 1000 ms at 30 threads | 400 ms | yes |" in table
    assert "| first answer text after the model's first token p50 / p99 | 50 / 1000 ms |" in table
    assert "| first answer text <= 300 ms after the model's first token (p99) | 1000 ms | **no** |" in table
    assert all(cell.strip() for line in table.splitlines() if line.startswith("|") for cell in line.split("|")[1:-1])
