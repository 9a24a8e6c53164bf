"""The examples README.md shows are what Folio really writes: a person reading the front page sees the real note."""

from __future__ import annotations

from bot import messages
from bot.models import Chunk, Citation, CitedPassage, Conversation, DocumentChange, Scope, Turn, passage_fingerprint
from bot.turns.watch import findings, note_text, watched_documents
from tests.conftest import ROOT

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
    citation = Citation(
        label=1,
        file="refund_policy.pdf",
        title="refund_policy.pdf",
        page=2,
        container="finance",
        passages=(CitedPassage(id="p2", fingerprint=passage_fingerprint("Refunds within 30 days.")),),
    )
    thread = Conversation(
        scope=Scope(container="finance"), turns=[Turn(question="q", answer="a", citations=(citation,))]
    )
    change = DocumentChange(
        container="finance",
        document="refund_policy.pdf",
        identity="i",
        kind="changed",
        old_version="a",
        new_version="b",
    )
    now = {
        ("finance", "refund_policy.pdf"): [
            Chunk(id="p2", file="refund_policy.pdf", page=2, container="finance", text=NEW_PAGE_2)
        ]
    }

    note = note_text(findings(thread, watched_documents([change]), now), reachable=True, day="2 Dec")

    assert quoted("When documents change") == [*note.splitlines(), f"[{messages.BUTTON_ANSWER_AGAIN}]"]
