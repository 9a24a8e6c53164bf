"""Feedback as golden lines for `folio eval`: a 👍 answer's cited pages become the truth; a 👎 (or a 👍 that cites
no page) becomes a line to review, marked `"review": true` so that eval skips it until an admin writes its truth
and removes the mark. Pure: records in, JSON lines out."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from bot.store.feedback import FeedbackRecord

_MARKER = re.compile(r"\s*\[\d+\]")  # the answer's own [n] labels: the truth cites pages instead
# Characters that str.splitlines() (and many editors and tools) take for a line end, which json.dumps with
# ensure_ascii=False leaves raw: a person's comment holding one would split its JSON line in two.
_LINE_ENDS = re.compile("[\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e]")


def _one_line(data: dict[str, object]) -> str:
    """`data` as JSON on exactly one line, whichever tool splits it (JSON escapes for any line-ending character)."""
    return _LINE_ENDS.sub(lambda found: f"\\u{ord(found[0]):04x}", json.dumps(data, ensure_ascii=False))


def golden_line(record: FeedbackRecord) -> str:
    """One golden line (JSON) for a feedback record."""
    said = {
        "rating": record.rating,
        "at": record.at,
        "channel": record.channel,
        "reason": record.reason,
        "comment": record.comment,
        "answer": record.answer,
        "cited": list(record.pages),
    }
    feedback = {key: value for key, value in said.items() if value is not None}
    if record.rating == "helpful" and record.pages:
        cited = " ".join(f"[{page}]" for page in record.pages)
        truth = f"{_MARKER.sub('', record.answer).strip()} {cited}"
        return _one_line({"question": record.question, "truth": truth, "feedback": feedback})
    return _one_line({"question": record.question, "truth": "", "review": True, "feedback": feedback})


def golden_lines(records: Iterable[FeedbackRecord]) -> list[str]:
    """Golden lines for `records`, one per answer and person, in the order given."""
    return [golden_line(record) for record in records]
