"""Documents people flagged as outdated: every 👎 whose form said "outdated" flags the documents its answer cited.
`folio feedback --outdated` lists them, most flagged first, with the threads, for whoever owns the documents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.store.feedback import FeedbackRecord


@dataclass(frozen=True)
class Flagged:
    """One document and the outdated verdicts on answers that cited it."""

    container: str
    file: str
    times: int  # verdicts (one per person and answer)
    pages: tuple[int, ...]  # the cited pages, in order
    threads: tuple[str, ...]  # `channel:thread_ts`, first flagged first
    last: str  # the latest verdict's time (ISO 8601)


def outdated_documents(records: Sequence[FeedbackRecord]) -> list[Flagged]:
    """The documents cited by answers flagged outdated, most flagged first (then the latest first). Pure."""
    found: dict[tuple[str, str], list[tuple[FeedbackRecord, int | None]]] = {}
    for record in records:
        if record.rating != "not_helpful" or record.reason != "outdated":
            continue
        cited = {(str(c.get("container")), str(c.get("file"))): c.get("page") for c in record.citations}
        for document in dict.fromkeys(cited):
            found.setdefault(document, []).append((record, _page(cited[document])))
    flagged = [_flagged(document, verdicts) for document, verdicts in found.items()]
    flagged.sort(key=lambda item: item.last, reverse=True)
    return sorted(flagged, key=lambda item: item.times, reverse=True)


def _flagged(document: tuple[str, str], verdicts: list[tuple[FeedbackRecord, int | None]]) -> Flagged:
    pages = tuple(sorted({page for _, page in verdicts if page is not None}))
    threads = tuple(dict.fromkeys(f"{record.channel}:{record.thread_ts}" for record, _ in verdicts))
    return Flagged(
        container=document[0],
        file=document[1],
        times=len(verdicts),
        pages=pages,
        threads=threads,
        last=max(record.at for record, _ in verdicts),
    )


def _page(value: object) -> int | None:
    return value if isinstance(value, int) else None


def flagged_line(item: Flagged) -> str:
    """`3× finance/refund_policy.pdf (pages 2, 4), last 2026-12-01T10:00:00+00:00: C0123:1700000000.000100, ...`"""
    pages = f" (page{'s' * (len(item.pages) > 1)} {', '.join(map(str, item.pages))})" if item.pages else ""
    return f"{item.times}× {item.container}/{item.file}{pages}, last {item.last}: {', '.join(item.threads)}"
