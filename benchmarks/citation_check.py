"""CPU of the citation rule per answer: streamed token by token (CitationStream) and rendered whole (render).

    .venv/bin/python benchmarks/citation_check.py

Prints microseconds per answer, the median of 7 rounds of 200 answers; run on an older checkout (PYTHONPATH) to
compare. The answer is ~150 tokens with markers, a link and a sandbox path, as the model writes one.
"""

from __future__ import annotations

import re
import statistics
import time

from bot.citation_stream import CitationStream
from bot.citations import render
from bot.models import Chunk

KNOWN = {f"S{n}": Chunk(id=f"c{n}", file=f"doc{n % 3}.pdf", page=n, container="hr", text="x") for n in range(1, 9)}
ANSWER = (
    "You are protected from balance billing for emergency care and for most care at in-network facilities [S1]. "
    "Out-of-network providers at an in-network hospital may not bill you more than your in-network cost sharing, "
    "and the plan counts what you pay toward your deductible and your out-of-pocket maximum [S2][S3]. See the "
    "[member guide](https://example.org/guide) and the table at sandbox:/mnt/data/totals.csv for the figures [S4]. "
    "If you get a surprise bill, contact member services and the plan will work with the provider to settle it; "
    "you only pay the amount you would have paid in network [S1, S2]. Ground ambulances are not covered [S9]."
)
TOKENS = re.findall(r"\s*\S{1,6}", ANSWER)


def link(chunk: Chunk) -> str:
    return f"https://docs.example/{chunk.file}#page={chunk.page}"


def streamed() -> None:
    stream = CitationStream(KNOWN, link_for=link)
    for token in TOKENS:
        stream.feed(token)
    stream.close()


def rendered() -> None:
    render(ANSWER, KNOWN, link_for=link)


def per_answer(work, rounds: int = 7, answers: int = 200) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(answers):
            work()
        times.append((time.process_time() - started) / answers * 1e6)
    return statistics.median(times)


if __name__ == "__main__":
    print(f"{len(TOKENS)} tokens: streamed {per_answer(streamed):.0f} us, rendered {per_answer(rendered):.0f} us")
