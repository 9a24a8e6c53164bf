"""The streaming figures of a `folio bench` run: how soon a person sees a step and the answer's first words.

    time to first visible step   event sent -> the turn's first status, placeholder or task card on screen
    time to first search shown   event sent -> "Searching: ..." on screen
    first text after the model   the model's first answer token -> the answer's first text on screen
                                 (not streamed, that is the whole answer, which waits for the model's last token)
    text appends                 appendStream calls carrying only answer text, against the characters streamed

Pure functions over a LoadResult, like bot/evaluation/load.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.evaluation.loadgen import LoadResult, TurnTiming
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


def stream_rows(s: StreamFigures, *, threads: int) -> list[tuple[str, str, str, str]]:
    """(metric, value, aim, met) rows, as in load.bench_rows."""
    at_30 = threads >= 30
    return [
        ("streaming / token delay", f"{'on' if s.streaming else 'off'} / {s.token_delay_ms:.0f} ms", "", ""),
        ("first visible step p50 / p99", f"{_opt(s.first_step_p50_ms)} / {_opt(s.first_step_p99_ms)} ms",
         f"p99 < {AIM_FIRST_STEP_P99_MS:.0f} ms at 30 threads",
         _met(s.first_step_p99_ms, lambda v: v < AIM_FIRST_STEP_P99_MS) if at_30 else ""),
        ("first search shown p50 / p99", f"{_opt(s.first_search_p50_ms)} / {_opt(s.first_search_p99_ms)} ms", "", ""),
        ("first answer text after the model's first token p50 / p99",
         f"{_opt(s.text_lag_p50_ms)} / {_opt(s.text_lag_p99_ms)} ms", f"<= {AIM_TEXT_LAG_MS:.0f} ms",
         _met(s.text_lag_p99_ms, lambda v: v <= AIM_TEXT_LAG_MS)),
        ("appendStream calls per turn (all / text only)", f"{s.appends_per_turn:.2f} / {s.text_appends_per_turn:.2f}",
         "", ""),
        ("answer characters per text-only append", _opt(s.chars_per_text_append),
         f">= {AIM_CHARS_PER_APPEND:.0f}", _met(s.chars_per_text_append, lambda v: v >= AIM_CHARS_PER_APPEND)),
    ]  # fmt: skip


def _ms(turns: list[TurnTiming], pair: Callable[[TurnTiming], tuple[float | None, float | None]]) -> list[float]:
    found = []
    for turn in turns:
        later, earlier = pair(turn)
        if later is not None and earlier is not None:
            found.append(1000 * (later - earlier))
    return found


def _pct(values: list[float], q: float) -> float | None:
    return percentile(values, q) if values else None


def _opt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}"


def _met(value: float | None, ok: Callable[[float], bool]) -> str:
    return "" if value is None else ("yes" if ok(value) else "**no**")
