"""The figures of a bench run, and the aims they are held to. Pure functions over a LoadResult.

The table has two parts, neither with an empty cell: the figures measured (a figure this run could not measure is
left out, not shown blank), then the aims that apply at this load, each with its figure and whether it is met.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.loadgen import LoadResult
from benchmarks.stream_figures import StreamFigures, met, stream_aims, stream_figures, stream_rows
from bot.evaluation.scoring import mean, percentile

MODEL_CALLS_PER_TURN = 3  # the fake model's turn: rewrite, two searches in one batch, answer (when none counted)

# The aims on a 2-core machine (issue 12), where fakes, driver and Folio share the cores.
AIM_CPU_PER_TURN_MS = 12.0  # at any load
AIM_ACK_P99_MS = 50.0  # at 30 threads
AIM_OVERHEAD_30 = 1.10  # at 30 threads, 300 ms per model call
AIM_OVERHEAD_100 = 1.20  # at 100 threads, 300 ms per model call, --workers 2
AIM_PEAK_MB = 300.0  # per Folio process


@dataclass(frozen=True)
class ProcessUsage:
    """What Folio's processes used while the load ran (None when /proc is unavailable)."""

    cpu_seconds: float | None = None  # all of Folio's processes together (the parent and its workers)
    peak_rss_mb: float | None = None  # the largest of them
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
    stream: StreamFigures | None = None  # first step, first text, appends (benchmarks/stream_figures.py)
    workers: int = 1  # Folio processes serving (`folio serve --workers N`)


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
    workers: int = 1,
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
        workers=workers,
    )


def figure_rows(f: BenchFigures) -> list[tuple[str, str]]:
    """(figure, value) rows; a figure this run did not measure (no /proc, nothing streamed) is left out."""
    rows = [
        ("load", f"{f.threads} threads, {f.model_latency_ms:.0f} ms a model call, follow-ups as {f.replies}"),
        ("Folio processes (`--workers`)", str(f.workers)),
        ("events sent (per s)", f"{f.events} ({f.events_per_s:.1f}/s)"),
        ("ack latency p50 / p99 / max", f"{f.ack_p50_ms:.1f} / {f.ack_p99_ms:.1f} / {f.ack_max_ms:.1f} ms"),
        ("turns answered (per s)", f"{f.turns} ({f.turns_per_s:.1f}/s)"),
        ("turn wall time p50 / p99", f"{f.turn_p50_s:.2f} / {f.turn_p99_s:.2f} s (model time {f.injected_s:.2f} s)"),
        ("model / Slack API calls per turn", f"{f.model_calls_per_turn:.2f} / {f.slack_calls_per_turn:.2f}"),
        ("errors / duplicate answers", f"{f.errors} / {f.duplicate_answers}"),
    ]
    if f.overhead_ratio is not None:
        rows.insert(6, ("overhead ratio (mean wall / model time)", f"{f.overhead_ratio:.3f}"))
    if f.cpu_s_per_turn is not None:
        rows.append(("Folio CPU per turn (all its processes)", f"{1000 * f.cpu_s_per_turn:.1f} ms"))
    if f.peak_rss_mb is not None:
        rows.append(("Folio peak memory (RSS, largest process)", f"{f.peak_rss_mb:.0f} MB"))
    if f.fakes_cpu_s is not None:
        rows.append(("fakes' CPU (other process)", f"{f.fakes_cpu_s:.1f} s"))
    return rows + (stream_rows(f.stream) if f.stream else [])


def aim_rows(f: BenchFigures) -> list[tuple[str, str, str]]:
    """(aim, figure, met) for each aim that applies at this run's load."""
    usual = f.model_latency_ms == 300
    rows = [
        (
            "no errors, no duplicate answers",
            f"{f.errors} / {f.duplicate_answers}",
            met(f.errors == 0 and f.duplicate_answers == 0),
        )
    ]
    if f.cpu_s_per_turn is not None:
        rows.append(
            (
                f"CPU per turn <= {AIM_CPU_PER_TURN_MS:.0f} ms",
                f"{1000 * f.cpu_s_per_turn:.1f} ms",
                met(1000 * f.cpu_s_per_turn <= AIM_CPU_PER_TURN_MS),
            )
        )
    if f.peak_rss_mb is not None:
        rows.append(
            (
                f"peak memory < {AIM_PEAK_MB:.0f} MB a process",
                f"{f.peak_rss_mb:.0f} MB",
                met(f.peak_rss_mb < AIM_PEAK_MB),
            )
        )
    if f.threads == 30:
        rows.append(
            (
                f"ack p99 <= {AIM_ACK_P99_MS:.0f} ms at 30 threads",
                f"{f.ack_p99_ms:.1f} ms",
                met(f.ack_p99_ms <= AIM_ACK_P99_MS),
            )
        )
    if f.overhead_ratio is not None and usual and f.threads == 30:
        rows.append(
            (
                f"overhead ratio <= {AIM_OVERHEAD_30:.2f} at 30 threads",
                f"{f.overhead_ratio:.3f}",
                met(f.overhead_ratio <= AIM_OVERHEAD_30),
            )
        )
    if f.overhead_ratio is not None and usual and f.threads == 100 and f.workers == 2:
        rows.append(
            (
                f"overhead ratio <= {AIM_OVERHEAD_100:.2f} at 100 threads, 2 workers",
                f"{f.overhead_ratio:.3f}",
                met(f.overhead_ratio <= AIM_OVERHEAD_100),
            )
        )
    return rows + (stream_aims(f.stream, threads=f.threads) if f.stream else [])


def bench_table(f: BenchFigures) -> str:
    """The figures, then the aims that apply at this load, as two Markdown tables; error samples below them."""
    lines = ["| figure | value |", "| --- | --- |"]
    lines += [f"| {name} | {value} |" for name, value in figure_rows(f)]
    lines += ["", "| aim at this load | figure | met |", "| --- | --- | --- |"]
    lines += [f"| {aim} | {value} | {met} |" for aim, value, met in aim_rows(f)]
    lines += [f"- error: {sample}" for sample in f.error_samples]
    return "\n".join(lines)
