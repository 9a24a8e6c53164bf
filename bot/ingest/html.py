"""A web page's text: headings and paragraphs on lines of their own, table cells apart, no scripts or styles.

Pure (stdlib `html.parser`). Block elements end a line, so the chunker sees headings as the short lines they are;
`<title>` (else the first `<h1>`) is the page's title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

_HIDDEN = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object", "nav"})
_BLOCKS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "header",
        "footer",
        "main",
        "aside",
        "nav",
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "table",
        "tr",
        "blockquote",
        "pre",
        "figure",
        "figcaption",
        "form",
        "fieldset",
        "address",
        "hr",
        "br",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
    }
)
_CELLS = frozenset({"td", "th"})
_VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "wbr"})


@dataclass(frozen=True)
class Page:
    title: str
    text: str


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0  # depth inside elements whose text is not shown
        self.title: list[str] = []
        self.h1: list[str] = []
        self.in_title = self.in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in _HIDDEN and tag not in _VOID:
            self.hidden += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")
        elif tag in _CELLS:
            self.parts.append(" | ")
        self.in_h1 = self.in_h1 or tag == "h1"

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")
        if tag == "h1":
            self.in_h1 = False

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.hidden:
            data = re.sub(r"\s+", " ", data)  # the source's line breaks are layout, not text
            self.parts.append(data)
            if self.in_h1:
                self.h1.append(data)


def page_text(markup: str) -> Page:
    """The visible text of an HTML document, one block a line, and its title ("" when it has none)."""
    parser = _Text()
    parser.feed(markup)
    parser.close()
    lines = (" ".join(line.split()).strip(" |") for line in "".join(parser.parts).split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = " ".join("".join(parser.title).split()) or " ".join("".join(parser.h1).split())
    return Page(title=title, text=text)
