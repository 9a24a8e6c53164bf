"""What a stream has to send and when: cards at once, the answer's first words at once, then text by time and size.

    box = Outbox()
    box.card(chunk); box.text("You are prot", now=t)   # "You are " may go; "prot" waits for the rest of its word
    box.due(now=t)                                       # when the next append should go (None: nothing to send)
    chunks = box.take(now=t)                             # what it carries; box.rest() at the end: everything left

Pure: values in, chunk dicts out; the caller owns the clock and Slack. The rules, each for a reason a reader sees:
- a card (a step starting or ending) goes at once, with whatever text is ready;
- the answer's first words go as soon as one whole word (or a checked citation) is there, so a person sees the
  answer begin within a moment of the model writing it;
- after that, text goes when the oldest text not sent has waited LAG, or sooner once BATCH characters wait (at most
  one append per MIN_GAP), so the visible text trails the model by about LAG while the budget allows;
- text goes only up to the last whole word: the word being written waits for its end (a citation, a table, a link
  come whole from the layers before: `citation_markdown`, `TableHold`, the streaming citation check).
"""

from __future__ import annotations

from typing import Any

from bot.slack.stream_chunks import markdown_chunks

Json = dict[str, Any]
LAG = 0.5  # seconds the oldest unsent text waits before an append carries it (the budget may stretch it)
BATCH = 250  # characters of waiting text that go without waiting LAG (a fast model: fewer, fuller appends)
MIN_GAP = 0.25  # seconds between a stream's text-only appends, at least: one fast stream leaves budget to others
LONGEST_WORD = 400  # characters a word may hold back (a long link, a line of code, a blob): past them it goes in parts


class Outbox:
    """The chunks of one stream not sent yet, in display order, and when they are due."""

    def __init__(self) -> None:
        self._chunks: list[Json] = []
        self._open_word = False  # the text ends in plain text that may still grow (not a citation, not a table)
        self._ready_since: float | None = None  # when the oldest text that may go now came
        self._last_append = float("-inf")
        self.text_out = False  # some answer text went out already

    def card(self, chunk: Json) -> None:
        """A task card; a card not sent yet shows its latest state only."""
        for index, queued in enumerate(self._chunks):
            if queued.get("id") == chunk["id"]:
                self._chunks[index] = chunk
                return
        last = self._chunks[-1] if self._chunks else None
        if last is not None and last["type"] == "markdown_text" and self._open_word:  # before the word being written
            cut = _cut(last["text"])
            head = [{"type": "markdown_text", "text": last["text"][:cut]}] if cut else []
            self._chunks[-1:] = [*head, chunk, {"type": "markdown_text", "text": last["text"][cut:]}]
            return
        self._chunks.append(chunk)

    def text(self, text: str, *, whole: bool, now: float) -> None:
        """Answer markdown; `whole`: it ends where a word may end (a citation, a finished table)."""
        if not text:
            return
        if self._chunks and self._chunks[-1]["type"] == "markdown_text":
            self._chunks[-1] = {"type": "markdown_text", "text": self._chunks[-1]["text"] + text}
        else:
            self._chunks.append({"type": "markdown_text", "text": text})
        self._open_word = not whole
        if self._ready_since is None and self._ready_chars() > 0:
            self._ready_since = now

    def due(self, *, now: float) -> float | None:
        """When the next append should go (`now` or earlier: at once), or None while nothing may go."""
        if any(chunk["type"] != "markdown_text" for chunk in self._chunks):
            return now
        if self._ready_since is None:
            return None
        if not self.text_out:
            return now
        gap = self._last_append + MIN_GAP
        if self._ready_chars() >= BATCH:
            return max(now, gap)
        return max(self._ready_since + LAG, gap)

    def take(self, *, now: float) -> list[Json]:
        """The chunks that may go now (the word being written stays), as Slack takes them."""
        chunks, held = list(self._chunks), ""
        texts = [index for index, chunk in enumerate(chunks) if chunk["type"] == "markdown_text"]
        if texts and self._open_word:  # the word being written waits (a card sent meanwhile goes before it)
            last = chunks[texts[-1]]["text"]
            cut = _cut(last)
            held = last[cut:]
            chunks[texts[-1]] = {"type": "markdown_text", "text": last[:cut]}
            chunks = [chunk for chunk in chunks if chunk["type"] != "markdown_text" or chunk["text"]]
        self._chunks = [{"type": "markdown_text", "text": held}] if held else []
        self._ready_since = None
        self._last_append = now
        self.text_out = self.text_out or any(chunk["type"] == "markdown_text" for chunk in chunks)
        return _split(chunks)

    def put_back(self, chunks: list[Json]) -> None:
        """Chunks taken that Slack did not show: first in line again."""
        self._chunks = [*chunks, *self._chunks]

    def rest(self) -> list[Json]:
        """Everything left, the word being written too: the stream ends."""
        chunks, self._chunks, self._ready_since = self._chunks, [], None
        return _split(chunks)

    def waiting(self) -> bool:
        return bool(self._chunks)

    def _ready_chars(self) -> int:
        """Characters of text that may go now (while no card waits, the text is one chunk)."""
        if not self._chunks or self._chunks[-1]["type"] != "markdown_text":
            return 0
        last = self._chunks[-1]["text"]
        return _cut(last) if self._open_word else len(last)


def _cut(text: str) -> int:
    """Where the text's last whole word ends (after its whitespace); 0 when it is one unfinished word. Read from the
    end: it runs on every piece of the answer, and the word being written is short (one longer than LONGEST_WORD
    is not held back: it would hold the whole answer back)."""
    for index in range(len(text) - 1, max(-1, len(text) - 1 - LONGEST_WORD), -1):
        if text[index].isspace():
            return index + 1
    return len(text) if len(text) > LONGEST_WORD else 0


def _split(chunks: list[Json]) -> list[Json]:
    return [
        piece
        for chunk in chunks
        for piece in (markdown_chunks(chunk["text"]) if chunk["type"] == "markdown_text" else [chunk])
    ]
