"""The streaming figures of a bench run: how soon a person sees a step and the answer's first words.

    time to first visible step   event sent -> the turn's first status, placeholder or task card on screen
    time to first search shown   event sent -> "Searching: ..." on screen
    first text after the model   the model's first answer token -> the answer's first text on screen
                                 (not streamed, that is the whole answer, which waits for the model's last token)
    text appends                 appendStream calls carrying only answer text, against the characters streamed

Pure functions over a LoadResult, like benchmarks/figures.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.loadgen import LoadResult, TurnTiming
from bot.evaluation.scoring import percentile

AIM_FIRST_STEP_P99_MS = 1000.0  # at 30 threads
AIM_TEXT_LAG_MS = 300.0  # the answer's first words on screen after the model wrote them
AIM_CHARS_PER_APPEND = 250.0  # answer characters streamed per text-only append (cards carry the rest)


@dataclass(frozen=True)
class StreamFigures:
    streaming: bool
    token_delay_ms: float
    first_step_p50_ms: float | None
    first_step_p99_ms: float | None
    first_search_p50_ms: float | None
    first_search_p99_ms: float | None
    text_lag_p50_ms: float | None
    text_lag_p99_ms: float | None
    appends_per_turn: float  # appendStream calls (cards and text)
    text_appends_per_turn: float  # those carrying only answer text
    chars_per_text_append: float | None  # streamed answer characters per text-only append


def stream_figures(result: LoadResult, *, streaming: bool, token_delay_ms: float) -> StreamFigures:
    """The streaming numbers of one run (None where nothing was measured)."""
    answered = [t for t in result.turns if t.error is None and t.answered_at is not None]
    steps = _ms(answered, lambda t: (t.first_step_at, t.sent_at))
    searches = _ms(answered, lambda t: (t.first_search_at, t.sent_at))
    lags = _ms(answered, lambda t: (t.first_text_at, t.first_token_at))
    counts = result.stream_text
    turns = max(len(answered), 1)
    text_only = counts.get("text_appends", 0)
    chars = counts.get("chars", 0)
    return StreamFigures(
        streaming=streaming,
        token_delay_ms=token_delay_ms,
        first_step_p50_ms=_pct(steps, 50),
        first_step_p99_ms=_pct(steps, 99),
        first_search_p50_ms=_pct(searches, 50),
        first_search_p99_ms=_pct(searches, 99),
        text_lag_p50_ms=_pct(lags, 50),
        text_lag_p99_ms=_pct(lags, 99),
        appends_per_turn=counts.get("appends", 0) / turns,
        text_appends_per_turn=text_only / turns,
        chars_per_text_append=chars / text_only if text_only else None,
    )


def stream_rows(s: StreamFigures) -> list[tuple[str, str]]:
    """(figure, value) rows, as in figures.figure_rows: what this run did not measure is left out."""
    rows = [("streaming / token delay", f"{'on' if s.streaming else 'off'} / {s.token_delay_ms:.0f} ms")]
    pairs = (
        ("first visible step p50 / p99", s.first_step_p50_ms, s.first_step_p99_ms),
        ("first search shown p50 / p99", s.first_search_p50_ms, s.first_search_p99_ms),
        ("first answer text after the model's first token p50 / p99", s.text_lag_p50_ms, s.text_lag_p99_ms),
    )
    rows += [(name, f"{p50:.0f} / {p99:.0f} ms") for name, p50, p99 in pairs if p50 is not None and p99 is not None]
    if s.streaming:
        rows.append(
            (
                "appendStream calls per turn (all / text only)",
                f"{s.appends_per_turn:.2f} / {s.text_appends_per_turn:.2f}",
            )
        )
    if s.chars_per_text_append is not None:
        rows.append(("answer characters per text-only append", f"{s.chars_per_text_append:.0f}"))
    return rows


def stream_aims(s: StreamFigures, *, threads: int) -> list[tuple[str, str, str]]:
    """(aim, figure, met) rows for the streaming aims that apply (as figures.aim_rows)."""
    rows = []
    if threads == 30 and s.first_step_p99_ms is not None:
        rows.append(
            (
                f"first visible step p99 < {AIM_FIRST_STEP_P99_MS:.0f} ms at 30 threads",
                f"{s.first_step_p99_ms:.0f} ms",
                met(s.first_step_p99_ms < AIM_FIRST_STEP_P99_MS),
            )
        )
    if s.streaming and s.text_lag_p99_ms is not None:
        rows.append(
            (
                f"first answer text <= {AIM_TEXT_LAG_MS:.0f} ms after the model's first token (p99)",
                f"{s.text_lag_p99_ms:.0f} ms",
                met(s.text_lag_p99_ms <= AIM_TEXT_LAG_MS),
            )
        )
    if s.chars_per_text_append is not None:
        rows.append(
            (
                f">= {AIM_CHARS_PER_APPEND:.0f} answer characters per text-only append",
                f"{s.chars_per_text_append:.0f}",
                met(s.chars_per_text_append >= AIM_CHARS_PER_APPEND),
            )
        )
    return rows


def _ms(turns: list[TurnTiming], pair: Callable[[TurnTiming], tuple[float | None, float | None]]) -> list[float]:
    found = []
    for turn in turns:
        later, earlier = pair(turn)
        if later is not None and earlier is not None:
            found.append(1000 * (later - earlier))
    return found


def _pct(values: list[float], q: float) -> float | None:
    return percentile(values, q) if values else None


def met(ok: bool) -> str:
    """A figure against its aim, as the tables show it."""
    return "yes" if ok else "**no**"
