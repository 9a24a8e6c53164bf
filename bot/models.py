"""The value types every part of Folio shares. Imports nothing of ours.

Frozen pydantic models, so that they validate on the way in and serialise to JSON for Redis and `--json` output.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

Profile = Literal["fast", "thorough"]
Feedback = Literal["helpful", "not_helpful"]  # a person's vote on one answer


# The media type each kept copy is served as, by the suffix of the kept file: one table, so the document route never
# guesses (converted Office files end in .pdf: orders.xlsx.pdf; web pages and mail in .txt: page.html.txt). What
# `folio index` reads, and how, is bot.ingest.kinds.
INDEXABLE: dict[str, str] = {
    ".pdf": "application/pdf",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",  # a CSV is kept as itself; web pages and mail as `<name>.<ext>.txt`
}


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


TAG_KEY = re.compile(r"^[a-z][a-z0-9_]{0,31}$")  # the form of a tag key, in the policy file and in every filter
# The form of a container name given to `folio index`: letters, digits, `-`, `_` and `.`, starting with a letter or
# digit (no spaces, no `/`): it names a folder of kept copies and appears in links and commands.
CONTAINER_NAME = re.compile(r"^[^\W_][\w.-]{0,63}$")


class Tag(_Value):
    """One `key:value` label on a document, e.g. `department:finance`."""

    key: str
    value: str

    @classmethod
    def parse(cls, text: str) -> Tag:
        """Parse `key:value` or `key=value`; raises ValueError with the accepted form."""
        for sep in (":", "="):
            key, found, value = text.partition(sep)
            if found and key.strip() and value.strip():
                return cls(key=key.strip().lower(), value=value.strip())
        raise ValueError(f"tag {text!r} is not of the form key:value (for example department:finance)")

    def __str__(self) -> str:
        return f"{self.key}:{self.value}"


class Scope(_Value):
    """What one search may see: one or more containers, optionally narrowed by tags.

    Tags with the same key are alternatives (OR); different keys must all match (AND). The containers come from the
    channel policy or the asker's access rules, never from the model or the user's words. `Scope(container="x")`
    is accepted as the one-container form (and is how conversations stored before scopes held several read back).
    """

    containers: tuple[str, ...]
    tags: tuple[Tag, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _one_container_form(cls, data: Any) -> Any:
        if isinstance(data, dict) and "container" in data:
            data = dict(data)
            if "containers" in data:
                raise ValueError("give container or containers, not both")
            data["containers"] = (data.pop("container"),)
        return data

    @field_validator("containers", mode="before")
    @classmethod
    def _containers(cls, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = (value,)
        names = [str(name).strip() for name in value]
        if not names or any(not name for name in names):
            raise ValueError("a scope needs at least one container, and no blank names")
        return tuple(sorted(set(names)))  # a set: the same scope compares equal whatever order it was given in

    def tags_by_key(self) -> dict[str, tuple[str, ...]]:
        """The tag values grouped by key, keys in first-seen order."""
        grouped: dict[str, list[str]] = {}
        for tag in self.tags:
            values = grouped.setdefault(tag.key, [])
            if tag.value not in values:
                values.append(tag.value)
        return {key: tuple(values) for key, values in grouped.items()}

    def allows(self, container: str, tags: tuple[Tag, ...]) -> bool:
        """Whether a passage of `container` with `tags` lies inside this scope (checked on every result)."""
        if container not in self.containers:
            return False
        if not self.tags:  # no tag asked: every passage of the container (a search checks ~50 rows this way)
            return True
        held = {(tag.key, tag.value) for tag in tags}
        return all(any((key, value) in held for value in values) for key, values in self.tags_by_key().items())

    def describe(self) -> str:
        """`benefits`, `finance, legal` or `benefits (year:2025, department:hr)`, for people."""
        where = ", ".join(self.containers)
        if not self.tags:
            return where
        return f"{where} ({', '.join(str(tag) for tag in self.tags)})"


def file_title(file: str) -> str:
    """A file name as the words of a title: `Northwind_Health_Plus.pdf` -> `Northwind Health Plus`,
    `orders.xlsx.pdf` -> `orders.xlsx`, `notes.md` -> `notes` (a document without a title of its own)."""
    if file.lower().endswith(".pdf"):
        stem = file[: -len(".pdf")]
    else:
        stem = file.rsplit(".", 1)[0] if "." in file.lstrip(".") else file
    return re.sub(r"_+", " ", stem).strip() or file


_KEPT_AS_TEXT = (".html", ".htm", ".eml")


def display_name(file: str) -> str:
    """The name people know a document by, whatever Folio stores it as: `orders.xlsx.pdf` -> `orders.xlsx` (a
    converted or OCR'd file shows its original name), `page.html.txt` -> `page.html` (a web page or mail kept as its
    text); `handbook.pdf` unchanged. Every list, search, citation and message shows this name."""
    stem, dot, ext = file.rpartition(".")
    if dot and ext.lower() == "pdf" and "." in stem:
        return stem
    if dot and ext.lower() == "txt" and stem.lower().endswith(_KEPT_AS_TEXT):
        return stem
    return file


# A table passage's context ends with where its rows stand: `... | sheet Invoices, rows 14-16` (bot.ingest.pipeline
# writes it). Kept in the context, which every index already stores and the model already reads, rather than in two
# new index fields each backend would have to migrate.
_TABLE_PLACE = re.compile(r".* \| sheet (?P<sheet>.+), rows? (?P<first>\d{1,9})(?:-(?P<last>\d{1,9}))?\Z", re.DOTALL)


class TablePlace(_Value):
    """Where a table passage's rows stand: the sheet's name and its first and last row, as the workbook numbers them."""

    sheet: str
    first_row: int
    last_row: int

    @property
    def label(self) -> str:
        """`sheet Invoices, rows 14-16` (`row 14` for one)."""
        rows = f"row {self.first_row}" if self.first_row == self.last_row else f"rows {self.first_row}-{self.last_row}"
        return f"sheet {self.sheet}, {rows}"


def table_context(context: str, place: TablePlace) -> str:
    """A table passage's context: the document's, then where its rows stand (read back by `Chunk.table_place`)."""
    return f"{context} | {place.label}"


def passage_fingerprint(text: str) -> str:
    """A short, stable fingerprint of a passage's text (runs of whitespace count as one space): whether the index
    still holds a passage as it was shown. Pure; kept per citation (`CitedPassage`) and compared before every
    follow-up turn (bot.ingest.lifecycle.forget_removed)."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:24]


class Chunk(_Value):
    """A passage of one document page, as indexed and as returned by a search."""

    id: str
    file: str  # the stored file name, e.g. `orders.xlsx.pdf`
    page: int | None  # 1-based; None for plain text, Markdown and tabular sources
    container: str
    tags: tuple[Tag, ...] = ()
    doc_date: str | None = None  # ISO date, YYYY-MM-DD
    text: str
    context: str = ""  # the document's title line and the section heading the chunk falls under
    tabular: bool = False
    score: float = 0.0  # the backend's score for this search; 0 when not from a search

    @property
    def cited_page(self) -> int | None:
        """The page a citation of this passage opens at: tables and text files carry none."""
        return None if self.tabular else self.page

    @property
    def table_place(self) -> TablePlace | None:
        """The sheet and rows of a table passage, None for any other (or a table indexed before rows were kept)."""
        found = _TABLE_PLACE.match(self.context) if self.tabular else None
        if found is None:
            return None
        first = int(found["first"])
        return TablePlace(sheet=found["sheet"], first_row=first, last_row=int(found["last"] or first))

    def in_scope(self, scope: Scope) -> bool:
        return scope.allows(self.container, self.tags)

    @property
    def fingerprint(self) -> str:
        """Its text's `passage_fingerprint`."""
        return passage_fingerprint(self.text)


class CitedPassage(_Value):
    """One passage a citation relied on, as it was shown: its id in the index and its text's fingerprint. With the
    citation's container, file and page, what a thread checks the index against (changed text is forgotten) and what
    a watch of cited pages compares."""

    id: str
    fingerprint: str


class Citation(_Value):
    """One reference as a person sees it: label [n] pointing at a document page."""

    label: int
    file: str
    title: str  # display name: `orders.xlsx.pdf` shows as `orders.xlsx`
    page: int | None
    container: str
    kind: Literal["page", "table", "text"] = "page"
    url: str | None = None
    rows: str | None = None  # a table's `sheet Invoices, rows 14-16`

    @property
    def place(self) -> str:
        """What follows the name: `, page 4`, ` · sheet Invoices, rows 14-16`, or nothing."""
        if self.rows:
            return f" · {self.rows}"
        return f", page {self.page}" if self.page is not None else ""

    # What the claims citing it relied on (none in records made before). Rolling upgrades: a release before this
    # field forbids it, as with `Conversation.model_items`: upgrade every replica before serving from this one.
    passages: tuple[CitedPassage, ...] = ()
    # The document's date (YYYY-MM-DD: --date, else the PDF's creation date, else the file's modification date):
    # how old the source is, shown beside it. Rolling upgrades: as `passages`.
    updated: str | None = None


class MarkerSpan(_Value):
    """Where a citation label stands in the answer text: text[start:end] == f"[{label}]"."""

    start: int
    end: int
    label: int


class ToolCall(_Value):
    """One tool call the model made, with what the backend did about it."""

    name: str
    arguments: dict[str, str] = Field(default_factory=dict)
    summary: str = ""  # e.g. "5 sources (S1-S5)", "budget spent", "rewritten"


class Usage(_Value):
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


class Answer(_Value):
    """The result of one turn, ready to render in Slack or a terminal."""

    text: str  # answer text with [n] labels in place of the model's [S#] markers
    citations: tuple[Citation, ...] = ()
    markers: tuple[MarkerSpan, ...] = ()
    removed_markers: tuple[str, ...] = ()  # [S#] markers naming no shown source: removed, never rendered
    answerable: bool = True
    mode: Literal["model", "search_only"] = "model"
    notices: tuple[str, ...] = ()  # lines shown above the answer: "No model is set up ...", "restored from history"
    tool_calls: tuple[ToolCall, ...] = ()
    response_ids: tuple[str, ...] = ()  # every response this turn created, tool rounds included
    # Model calls that answered, tool rounds included: counted apart from response_ids, which a service that keeps
    # no responses (FOLIO_MODEL_STATE=client) leaves empty
    model_calls: int = 0
    final_response_id: str | None = None  # set only when the model gave a final answer
    cap_hit: bool = False
    usage: Usage = Usage()
    profile: Profile = "fast"


def is_direct_message(conversation: str) -> bool:
    """Whether a Slack conversation id is a direct message with Folio: the one rule an event, a button's thread,
    `/ask`'s channel and the access rules all ask. Channels (public or private) and group DMs have ids starting
    with C or G; a DM's starts with D, and anything that is no channel has no channel rule either."""
    return conversation[:1] not in ("C", "G")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Turn(_Value):
    """One question and its answer, as stored with the conversation."""

    question: str
    answer: str
    citations: tuple[Citation, ...] = ()
    response_ids: tuple[str, ...] = ()
    usage: Usage = Usage()
    profile: Profile = "fast"
    asked_by: str | None = None
    at: str = Field(default_factory=utc_now)
    feedback: Feedback | None = None
    # The answer relied on a document since removed or out of this thread's scope: its text and references are gone
    # (a claim cannot be told apart from the source that backed it), and the history sent to the model skips it.
    set_aside: bool = False


class ThreadFile(_Value):
    """A file shared in a thread and read as that thread's own document (see bot.turns.thread_files)."""

    id: str  # the surface's id of the file (Slack's F...), so the same file shared twice is read once
    name: str  # as people know it: contract.pdf
    file: str  # as indexed in the thread's own container: contract.pdf, deck.pptx.pdf
    pages: int | None = None  # None: no pages (a text or a table)
    at: str = Field(default_factory=utc_now)


def _rested_on(citation: Citation, documents: set[tuple[str, str]], passages: set[str]) -> bool:
    """Whether a citation rested on a forgotten source: on one of its passages where it kept them, else (records made
    before citations kept them) on its document."""
    if citation.passages:
        return any(passage.id in passages for passage in citation.passages)
    return (citation.container, citation.file) in documents


class Conversation(BaseModel):
    """A Slack thread (or terminal chat): everything needed to continue it or delete it.

    Mutable: the agent adds sources to it during a turn; the caller saves it after a final answer.

    Rolling upgrades: the release before `model_items` (abb07df) forbids unknown fields too. A record without kept
    items (FOLIO_MODEL_STATE=server, and auto until the service is found to keep nothing) leaves the field out, so
    it is byte for byte what that release wrote, and both releases read it. A record with kept items (client mode,
    or auto once it learned) does not validate there: an older replica logs "conversation ... is unreadable;
    starting afresh", answers without the thread's earlier turns, and saves a new record over it, which forgets
    Folio's earlier messages in the thread (the response ids it recorded stay in the thread's response set).
    So upgrade every replica before choosing client mode or pointing Folio at a server that keeps nothing.
    """

    model_config = ConfigDict(extra="forbid")

    # What the current turn searches. The caller sets it for every turn (Slack: today's policy narrowed by
    # `narrowing`, see `rescope`); stored, it is the scope the last turn searched, never an authority.
    scope: Scope
    narrowing: tuple[Tag, ...] = ()  # the thread's own `/ask` filters, applied to whatever today's policy allows
    profile: Profile = "fast"
    last_response_id: str | None = None
    sources: dict[str, Chunk] = Field(default_factory=dict)  # "S3" -> the chunk shown to the model as S3
    next_source: int = 1  # the number the next new source gets; never reused in this conversation
    turns: list[Turn] = Field(default_factory=list)
    response_ids: list[str] = Field(default_factory=list)  # every id created, for deletion at the provider
    started_by: str | None = None
    message_ts: list[str] = Field(default_factory=list)  # Folio's own messages in the thread, for deletion
    answers_set_aside: bool = False  # earlier answers were set aside (see `forget`): the next answer says so once
    # For a model service that keeps no responses (FOLIO_MODEL_STATE=client): the items of recent turns, one group
    # per turn (question, function calls and their outputs, answer), resent with every call; empty otherwise, and
    # then left out of the record (see `_as_the_previous_release_wrote`).
    model_items: list[list[dict[str, Any]]] = Field(default_factory=list)
    # Files shared in the thread and read as its own documents, searched beside its scope; empty otherwise, and then
    # left out of the record, as `model_items` is (a release before them reads the record as it wrote it).
    thread_files: list[ThreadFile] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _narrowing_of_old_records(cls, data: Any) -> Any:
        # Records saved before `narrowing` existed kept only the resolved scope: its tags stand in for the thread's
        # filters (those today's policy no longer allows are dropped when the next turn resolves its scope).
        if isinstance(data, dict) and "narrowing" not in data and isinstance(data.get("scope"), dict):
            data = {**data, "narrowing": data["scope"].get("tags", ())}
        return data

    @model_serializer(mode="wrap")
    def _as_the_previous_release_wrote(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Without kept items, the record the release before `model_items` wrote (see the class docstring).
        data = handler(self)
        if isinstance(data, dict) and not self.model_items:
            data.pop("model_items", None)
        if isinstance(data, dict) and not self.thread_files:
            data.pop("thread_files", None)
        return data

    def rescope(self, scope: Scope, *, own: str | None = None) -> bool:
        """Search `scope` from now on; True when it differs from the last turn's.

        Sources outside it are forgotten (see `forget`), but for those of `own`: the container of the files shared
        in this thread, which its turns search beside their scope.
        """
        if scope == self.scope:
            return False
        self.forget(lambda chunk: not chunk.in_scope(scope) and chunk.container != own)
        self.scope = scope
        return True

    def forget(self, gone: Callable[[Chunk], bool]) -> bool:
        """Forget the sources `gone` names (outside today's scope, or of a document removed since), so no marker can
        cite them again; when any were, the chain restarts from the saved turns, so the model's context no longer
        holds their passages, and every earlier answer that cited their documents is set aside: its claims, titles
        and labels are neither kept nor sent to the model again. True when any were forgotten."""
        outside = [ref for ref, chunk in self.sources.items() if gone(chunk)]
        documents = {(self.sources[ref].container, self.sources[ref].file) for ref in outside}
        passages = {self.sources[ref].id for ref in outside}
        for ref in outside:
            del self.sources[ref]
        if outside:
            self.last_response_id = None
            self.model_items = []  # they hold the forgotten passages; the next turn restates the turns kept
            self._set_aside(documents, passages)
        return bool(outside)

    def _set_aside(self, documents: set[tuple[str, str]], passages: set[str]) -> None:
        for index, turn in enumerate(self.turns):
            if any(_rested_on(citation, documents, passages) for citation in turn.citations):
                self.turns[index] = turn.model_copy(update={"answer": "", "citations": (), "set_aside": True})
                self.answers_set_aside = True

    def tell_set_aside(self) -> bool:
        """Whether this answer must say that earlier answers were set aside; it is said once."""
        told, self.answers_set_aside = self.answers_set_aside, False
        return told

    def record(self, question: str, answer: Answer, *, asked_by: str | None = None) -> Turn:
        """Append a finished turn; the chain moves on only when the model gave a final answer."""
        turn = Turn(
            question=question,
            answer=answer.text,
            citations=answer.citations,
            response_ids=answer.response_ids,
            usage=answer.usage,
            profile=answer.profile,
            asked_by=asked_by,
        )
        self.turns.append(turn)
        self.profile = answer.profile
        self.response_ids.extend(rid for rid in answer.response_ids if rid not in self.response_ids)
        if answer.final_response_id:
            self.last_response_id = answer.final_response_id
        return turn


class DocumentChange(_Value):
    """One document that a sync, an index or a remove run added, changed or removed: what the watch (threads whose
    cited passages changed) consumes. `identity` survives a rename (the provider's ID, else the first content hash
    or the path it came from); a rename is kind "changed" with `previous_name`."""

    container: str
    document: str  # the name people see (as the index holds it)
    identity: str
    kind: Literal["added", "changed", "removed"]
    old_version: str | None = None  # content hash or fingerprint before; None when added
    new_version: str | None = None  # after; None when removed
    previous_name: str | None = None  # the name it had before a rename
