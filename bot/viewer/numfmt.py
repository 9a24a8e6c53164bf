"""A cell's value as its workbook shows it, by the cell's number format ("#,##0.00", "dd/mm/yyyy", "0%"). Pure.

Enough of Excel's format codes for what invoices, budgets and registers use: dates and times, thousands separators,
fixed decimals, percentages, currency symbols and quoted text, a second section for negatives. A code outside that
shows the value as Folio indexed it, never an error.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time

_BRACKETS = re.compile(r"\[(?:\$(?P<symbol>[^\]-]*)(?:-[^\]]*)?|[^\]]*)\]")
_QUOTED = re.compile(r'"([^"]*)"|\\(.)|_.|\*.')
_DATE_TOKEN = re.compile(r"yyyy|yy|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|am/pm|a/p|\.0+", re.IGNORECASE)
_NUMBER = re.compile(r"[#0?,.]*[0#?][#0?,.]*")


def formatted(value: object, code: str | None) -> str:
    """`value` (a cell's) under the format `code`; General or an unknown code: as written."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    code = (code or "General").strip()
    if isinstance(value, (datetime, date, time)):
        return _date(value, code)
    if isinstance(value, (int, float)) and code.lower() != "general":
        return _number(float(value), code)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.10g}"
    return str(value)


def _literal(section: str) -> str:
    """A section with its bracketed parts reduced to their currency symbol and its quoted text unquoted; text that
    stands for itself is kept, `_x` (a space as wide as x) becomes a space, `*x` (fill) nothing."""
    section = _BRACKETS.sub(lambda found: found["symbol"] or "", section)
    return _QUOTED.sub(_unquoted, section)


def _unquoted(found: re.Match[str]) -> str:
    whole = found.group()
    if whole.startswith('"'):
        return found[1]
    if whole.startswith("\\"):
        return found[2]
    return " " if whole.startswith("_") else ""  # `_x`: a space as wide as x; `*x`: fill the cell with x


def _date(value: datetime | date | time, code: str) -> str:
    section = _BRACKETS.sub("", code.split(";")[0])
    if code.lower() == "general" or not re.search(r"[ymdhs]", section, re.IGNORECASE):
        if isinstance(value, datetime) and value.time() == time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    twelve = bool(re.search(r"am/pm|a/p", section, re.IGNORECASE))
    tokens = list(_DATE_TOKEN.finditer(section))
    out, at = [], 0
    for index, token in enumerate(tokens):
        out.append(_QUOTED.sub(_unquoted, section[at : token.start()]))
        out.append(_date_part(value, token.group(), tokens, index, twelve))
        at = token.end()
    out.append(_QUOTED.sub(_unquoted, section[at:]))
    return "".join(out)


def _date_part(value: datetime | date | time, token: str, tokens: list[re.Match[str]], index: int, twelve: bool) -> str:
    lower = token.lower()
    day = value if isinstance(value, date) else None
    clock = value if isinstance(value, time) else (value.time() if isinstance(value, datetime) else time(0))
    if lower in ("m", "mm") and _is_minute(tokens, index):
        return f"{clock.minute:02d}" if lower == "mm" else str(clock.minute)
    if day is not None:
        parts = {
            "yyyy": f"{day.year:04d}",
            "yy": f"{day.year % 100:02d}",
            "mmmmm": day.strftime("%B")[0],
            "mmmm": day.strftime("%B"),
            "mmm": day.strftime("%b"),
            "mm": f"{day.month:02d}",
            "m": str(day.month),
            "dddd": day.strftime("%A"),
            "ddd": day.strftime("%a"),
            "dd": f"{day.day:02d}",
            "d": str(day.day),
        }
        if lower in parts:
            return parts[lower]
    hour = clock.hour % 12 or 12 if twelve else clock.hour
    parts = {
        "hh": f"{hour:02d}",
        "h": str(hour),
        "ss": f"{clock.second:02d}",
        "s": str(clock.second),
        "am/pm": "AM" if clock.hour < 12 else "PM",
        "a/p": "A" if clock.hour < 12 else "P",
    }
    return parts.get(lower, token)


def _is_minute(tokens: list[re.Match[str]], index: int) -> bool:
    """`m` after an hour or before a second is minutes, not the month."""
    before = tokens[index - 1].group().lower() if index else ""
    after = tokens[index + 1].group().lower() if index + 1 < len(tokens) else ""
    return before in ("h", "hh") or after in ("s", "ss")


def _number(value: float, code: str) -> str:
    sections = code.split(";")
    section = sections[1] if value < 0 and len(sections) > 1 else sections[0]
    if value == 0 and len(sections) > 2:
        section = sections[2]
    magnitude = abs(value) if value < 0 and len(sections) > 1 else value
    text = _literal(section)
    found = _NUMBER.search(text)
    if found is None:
        return text if text.strip() else str(value)
    pattern = found.group()
    if "%" in text:
        magnitude *= 100
    integer, _, fraction = pattern.partition(".")
    decimals = sum(1 for char in fraction if char in "0#?")
    grouped = "," in integer
    number = f"{magnitude:,.{decimals}f}" if grouped else f"{magnitude:.{decimals}f}"
    return text[: found.start()] + number + text[found.end() :]
