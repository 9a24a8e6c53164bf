"""The figures of a `folio bench` run, and the aims they are held to. Pure functions over a LoadResult."""

from __future__ import annotations

from dataclasses import dataclass

from bot.evaluation.load_stream import StreamFigures, stream_figures, stream_rows
from bot.evaluation.loadgen import LoadResult
from bot.evaluation.scoring import mean, percentile

MODEL_CALLS_PER_TURN = 3  # the fake model's turn: rewrite, two searches in one batch, answer (when none counted)

# The aims on a 2-core machine, one Folio process.
AIM_ACK_P99_MS = 100.0  # at 50 events/s
AIM_OVERHEAD = 1.10  # at 200 threads, 300 ms per model call
AIM_PEAK_MB = 300.0


@dataclass(frozen=True)
class ProcessUsage:
    """What the Folio process used while the load ran (None when /proc is unavailable)."""

    cpu_seconds: float | None = None
    peak_rss_mb: float | None = None
    fakes_cpu_seconds: float | None = None


@dataclass(frozen=True)
class BenchFigures:
    threads: int
    replies: str  # follow-ups as "plain" thread replies or as "mention"s
    model_latency_ms: float
    duration_s: float
    events: int
    events_per_s: float
    ack_p50_ms: float
    ack_p99_ms: float
    ack_max_ms: float
    turns: int  # answered turns
    turns_per_s: float
    turn_p50_s: float
    turn_p99_s: float
    model_calls_per_turn: float  # as the fake model counted them (3 unless Folio asked for a correction, ...)
    slack_calls_per_turn: float
    injected_s: float  # model time a turn contains: model calls per turn x latency, plus writing the answer's tokens
    overhead_ratio: float | None  # mean turn wall time / injected_s; 1.0 is the limit
    cpu_s_per_turn: float | None
    peak_rss_mb: float | None
    fakes_cpu_s: float | None
    errors: int
    error_samples: tuple[str, ...]
    duplicate_answers: int
    stream: StreamFigures | None = None  # first step, first text, appends (bot/evaluation/load_stream.py)


def figures(
    result: LoadResult,
    usage: ProcessUsage,
    *,
    threads: int,
    latency_ms: float,
    duration: float,
    replies: str = "plain",
    streaming: bool = True,
    token_delay_ms: float = 0.0,
) -> BenchFigures:
    """The numbers of one run."""
    answered = [t for t in result.turns if t.error is None and t.answered_at is not None]
    walls = [t.answered_at - t.sent_at for t in answered if t.answered_at is not None]
    # New questions stop at `duration`; answers still arrive after it. Rates use those two windows, not the wait
    # for stragglers (a turn that never answers would otherwise stretch the window by the whole timeout).
    answering = max((t.answered_at for t in answered if t.answered_at), default=result.started_at) - result.started_at
    acks_ms = [1000 * seconds for seconds in result.acks]
    # Per answered turn: a reply Folio ignored made no call at all and would dilute the figure.
    model_calls = result.model_calls / len(answered) if result.model_calls and answered else float(MODEL_CALLS_PER_TURN)
    injected = model_calls * latency_ms / 1000 + (result.generation_s / len(answered) if answered else 0.0)
    mean_wall = mean(walls)
    failures = [t.error for t in result.turns if t.error] + result.ack_failures
    return BenchFigures(
        threads=threads,
        replies=replies,
        model_latency_ms=latency_ms,
        duration_s=duration,
        events=result.events,
        events_per_s=result.events / duration,
        ack_p50_ms=percentile(acks_ms, 50),
        ack_p99_ms=percentile(acks_ms, 99),
        ack_max_ms=max(acks_ms, default=0.0),
        turns=len(answered),
        turns_per_s=len(answered) / answering if answering > 0 else 0.0,
        turn_p50_s=percentile(walls, 50),
        turn_p99_s=percentile(walls, 99),
        model_calls_per_turn=model_calls,
        slack_calls_per_turn=sum(result.slack_calls.values()) / max(len(answered), 1),
        injected_s=injected,
        overhead_ratio=mean_wall / injected if mean_wall is not None and injected > 0 else None,
        cpu_s_per_turn=usage.cpu_seconds / len(answered) if usage.cpu_seconds is not None and answered else None,
        peak_rss_mb=usage.peak_rss_mb,
        fakes_cpu_s=usage.fakes_cpu_seconds,
        errors=len(failures),
        error_samples=tuple(dict.fromkeys(failures))[:5],
        duplicate_answers=result.duplicate_answers,
        stream=stream_figures(result, streaming=streaming, token_delay_ms=token_delay_ms),
    )


def _opt(value: float | None, form: str) -> str:
    return "n/a" if value is None else format(value, form)


def _met(ok: bool | None) -> str:
    return "" if ok is None else ("yes" if ok else "**no**")


def bench_rows(f: BenchFigures) -> list[tuple[str, str, str, str]]:
    """(metric, value, aim, met) rows; an aim that depends on the load applies only at that load."""
    at_50 = 40 <= f.events_per_s <= 60
    at_200 = f.threads >= 200 and f.model_latency_ms >= 300
    return [
        ("threads / model latency / follow-ups", f"{f.threads} / {f.model_latency_ms:.0f} ms / {f.replies}", "", ""),
        ("events sent (per s)", f"{f.events} ({f.events_per_s:.1f}/s)", "", ""),
        ("ack latency p50 / p99 / max", f"{f.ack_p50_ms:.1f} / {f.ack_p99_ms:.1f} / {f.ack_max_ms:.1f} ms",
         f"p99 < {AIM_ACK_P99_MS:.0f} ms at 50 events/s", _met(f.ack_p99_ms < AIM_ACK_P99_MS) if at_50 else ""),
        ("turns answered (per s)", f"{f.turns} ({f.turns_per_s:.1f}/s)", "", ""),
        ("turn wall time p50 / p99", f"{f.turn_p50_s:.2f} / {f.turn_p99_s:.2f} s",
         f"injected {f.injected_s:.2f} s", ""),
        ("overhead ratio (mean wall / injected)", _opt(f.overhead_ratio, ".3f"),
         f"<= {AIM_OVERHEAD} at 200 threads x 300 ms",
         _met(f.overhead_ratio is not None and f.overhead_ratio <= AIM_OVERHEAD) if at_200 else ""),
        ("model / Slack API calls per turn", f"{f.model_calls_per_turn:.2f} / {f.slack_calls_per_turn:.2f}", "", ""),
        ("Folio CPU per turn", _opt(f.cpu_s_per_turn and 1000 * f.cpu_s_per_turn, ".1f") + " ms", "", ""),
        ("Folio peak memory (RSS)", _opt(f.peak_rss_mb, ".0f") + " MB", f"< {AIM_PEAK_MB:.0f} MB",
         _met(f.peak_rss_mb < AIM_PEAK_MB) if f.peak_rss_mb is not None else ""),
        ("fakes' CPU (other process)", _opt(f.fakes_cpu_s, ".1f") + " s", "", ""),
        ("errors", str(f.errors), "0", _met(f.errors == 0)),
        ("duplicate answers", str(f.duplicate_answers), "0", _met(f.duplicate_answers == 0)),
        *(stream_rows(f.stream, threads=f.threads) if f.stream else []),
    ]


def bench_table(f: BenchFigures) -> str:
    """The figures as a Markdown table, with the error samples below it."""
    lines = ["| metric | value | aim | met |", "| --- | --- | --- | --- |"]
    lines += ["| " + " | ".join(row) + " |" for row in bench_rows(f)]
    lines += [f"- error: {sample}" for sample in f.error_samples]
    return "\n".join(lines)
