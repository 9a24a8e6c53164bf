"""Small word functions the messages of every audience share. Imports nothing of ours."""

from __future__ import annotations


def one_line(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def dated(day: str) -> str:
    return f"dated {day}"


__all__ = ["dated", "one_line"]
