"""Every link between README.md and the pages in docs/ leads somewhere: the file exists and so does the heading."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT

LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)\s]+))?\)")


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def broken_links(page: Path) -> list[str]:
    broken = []
    for target, fragment in LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        linked = (page.parent / target) if target else page
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}#{fragment} (no such heading)")
    return broken


def test_every_link_in_the_readme_and_the_docs_leads_somewhere() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

    broken = {page.name: found for page in pages if (found := broken_links(page))}

    assert broken == {}


def test_a_link_to_a_missing_page_or_heading_is_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Its part\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#its-part) [b](gone.md) [c](other.md#nowhere) [d](https://example.com/x)\n")

    assert broken_links(page) == ["gone.md (no such file)", "other.md#nowhere (no such heading)"]
