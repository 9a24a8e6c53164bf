"""The examples README.md shows are what Folio really writes: a person reading the front page sees the real note."""

from __future__ import annotations

from bot import messages
from bot.turns.watch import findings, note_text, watched_documents
from tests.conftest import ROOT
from tests.turns.test_watch_findings import changed, cited, page

NEW_PAGE_2 = "Refunds are accepted within 14 days of purchase, receipts no longer needed."


def quoted(heading: str) -> list[str]:
    """The quoted lines of README.md's section `heading`, each folded line joined back to the line it continues."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    joined: list[str] = []
    for line in (line.removeprefix(">").strip() for line in section.splitlines() if line.startswith(">")):
        if joined and line and not line.startswith(("•", "[")):
            joined[-1] = f"{joined[-1]} {line}"
        elif line:
            joined.append(line)
    return joined


def test_the_readme_shows_the_note_a_changed_page_really_gets() -> None:
    file = "refund_policy.pdf"
    now = {("finance", file): [page(2, NEW_PAGE_2, file=file)]}

    note = note_text(findings(cited(file), watched_documents([changed(file)]), now), reachable=True, day="2 Dec")

    assert quoted("When documents change") == [*note.splitlines(), f"[{messages.BUTTON_ANSWER_AGAIN}]"]
