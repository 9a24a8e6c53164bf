"""Answer -> Block Kit, and answer -> standard markdown for streams. Pure functions: values in, text or blocks out.

mrkdwn rules (https://docs.slack.dev/messaging/formatting-message-text): only `&`, `<`, `>` are escaped in text;
a link is `<url|label>` and a `|` inside the URL must be `%7C`. A section holds 3000 characters, a message 50 blocks.

Streams (chat.startStream / appendStream) take standard markdown instead: a link is `[label](url)`, and the model's
text is escaped so that it cannot make a link, an autolink or a mention of its own (`escape_markdown`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextActionsBlock,
    ContextBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    MarkdownBlock,
    MarkdownTextObject,
    SectionBlock,
)

from bot import messages
from bot.models import Answer, Citation, Scope
from bot.slack.tables import has_table

SECTION_LIMIT = 3000
MARKDOWN_LIMIT = 12_000  # the `markdown` block's text, counted over all of a message's markdown blocks
BLOCK_LIMIT = 50
FALLBACK_LIMIT = 3000

ACTION_FEEDBACK = "folio_feedback"  # Slack's native 👍 / 👎 (feedback_buttons); value "helpful:3" / "not_helpful:3"
ACTION_HELPFUL = "folio_helpful"  # the buttons answers had before feedback_buttons: still heard, no longer shown
ACTION_NOT_HELPFUL = "folio_not_helpful"
ACTION_THINK_HARDER = "folio_think_harder"
ACTION_DELETE = "folio_delete"
ACTION_PRIVATE = "folio_private"  # "Search what only I can see", offered to one person (bot.slack.private)
# The overflow menu answers had until Slack showed their admins-only item to everyone: still heard, no longer shown
# (an admin's Home tab opens traces now: bot.slack.home)
ACTION_MORE = "folio_more"
WHY = "why"


@dataclass(frozen=True)
class SlackMessage:
    """What chat.postMessage / chat.update receive: `text` for notifications, `blocks` for display."""

    text: str
    blocks: tuple[Block, ...] = ()

    def block_dicts(self) -> list[dict]:
        return [block.to_dict() for block in self.blocks]


def escape(text: str) -> str:
    """Escape the three characters mrkdwn gives meaning to."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link_url(url: str) -> str:
    """A URL made safe inside `<url|label>`."""
    return escape(url).replace("|", "%7C").replace(" ", "%20")


def link(url: str | None, label: str) -> str:
    """`<url|label>`, or the escaped label alone when there is no URL; the label on one line (a line break inside
    `<...>` ends Slack's link, and a file name may hold one)."""
    label = escape(" ".join(label.split()))
    return f"<{link_url(url)}|{label}>" if url else label


_BOLD = re.compile(r"\*\*(.+?)\*\*")
_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)


def to_mrkdwn(text: str) -> str:
    """Model Markdown to Slack mrkdwn: escape, then `**bold**` and `# headings` become `*bold*`."""
    text = escape(text)
    text = _HEADING.sub(r"*\1*", text)
    return _BOLD.sub(r"*\1*", text)


def answer_mrkdwn(answer: Answer) -> str:
    """The answer text with every `[n]` marker turned into a link to its page."""
    urls = {citation.label: citation.url for citation in answer.citations}
    parts: list[str] = []
    position = 0
    for marker in sorted(answer.markers, key=lambda span: span.start):
        if marker.start < position:
            continue  # overlapping spans would duplicate text
        parts.append(to_mrkdwn(answer.text[position : marker.start]))
        parts.append(link(urls.get(marker.label), f"[{marker.label}]"))
        position = marker.end
    parts.append(to_mrkdwn(answer.text[position:]))
    return "".join(parts)


def split_mrkdwn(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """Split at paragraph, line or word ends, never inside a `<link>` or an `&entity;`."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = _cut_point(text, limit)
        pieces.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text.strip():
        pieces.append(text)
    return pieces


def _cut_point(text: str, limit: int) -> int:
    window = text[:limit]
    for separator in ("\n\n", "\n", " "):
        at = window.rfind(separator)
        if at > limit // 2 and _safe(text, at):
            return at
    cut = limit
    while cut > 1 and not _safe(text, cut):
        cut -= 1
    return cut


def _safe(text: str, at: int) -> bool:
    """True when `at` is outside any `<...>` link and any `&...;` entity."""
    before = text[:at]
    open_link = before.rfind("<") > before.rfind(">")
    amp = before.rfind("&")
    open_entity = amp != -1 and ";" not in before[amp:] and at - amp <= 5
    return not open_link and not open_entity


def age(updated: str | None, today: date) -> str:
    """` · updated 3 days ago` from the document's ISO date; nothing when it has none (or an unreadable one)."""
    try:
        day = date.fromisoformat((updated or "")[:10])
    except ValueError:
        return ""
    return f" · {messages.updated_ago((today - day).days)}"


def source_line(citation: Citation, today: date | None = None) -> str:
    """`[1] <url|Employee handbook>, page 4 · hr · updated 3 days ago`; `[1] <url|Invoices.xlsx> · sheet Invoices,
    rows 14-16 · finance` (a source without a date says nothing of its age). `today`: UTC today unless given."""
    where = escape(citation.place)
    when = age(citation.updated, today or datetime.now(UTC).date())
    return f"[{citation.label}] {link(citation.url, citation.title)}{where} · {escape(citation.container)}{when}"


def filters_line(scope: Scope, basis: str | None = None) -> str:
    """`Searched *finance, legal* (what you may read) · Applied filters: none`: every container searched, and why
    when a DM's asker decided it (`basis` is Folio's own mrkdwn)."""
    containers = escape(", ".join(scope.containers))
    return messages.applied_filters(containers, [escape(str(tag)) for tag in scope.tags], basis)


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text))


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=text[:SECTION_LIMIT])])


def _buttons(turn_index: int, *, think_harder: bool) -> ActionsBlock:
    value = json.dumps({"turn": turn_index})
    buttons = []
    if think_harder:
        buttons.append(ButtonElement(text=messages.BUTTON_THINK_HARDER, action_id=ACTION_THINK_HARDER, value=value))
    confirm = ConfirmObject(
        title=messages.CONFIRM_DELETE_TITLE,
        text=messages.CONFIRM_DELETE_TEXT,
        confirm="Delete",
        deny="Keep",
        style="danger",
    )
    delete = ButtonElement(
        text=messages.BUTTON_DELETE, action_id=ACTION_DELETE, value=value, style="danger", confirm=confirm
    )
    buttons.append(delete)
    return ActionsBlock(elements=buttons)


def _notices(answer: Answer) -> list[Block]:
    return [_context("\n".join(escape(notice) for notice in answer.notices))] if answer.notices else []


def _answer_tail(answer: Answer, scope: Scope, turn_index: int, basis: str | None) -> list[Block]:
    """Below the answer: its sources, the applied filters and the buttons."""
    sources = split_mrkdwn("\n".join([messages.SOURCES_HEADING, *map(source_line, answer.citations)]))
    tail: list[Block] = [_section(text) for text in sources] if answer.citations else []
    return tail + [
        _context(filters_line(scope, basis)),
        feedback_block(turn_index),
        _buttons(turn_index, think_harder=answer.profile == "fast"),
    ]


def feedback_block(turn_index: int) -> ContextActionsBlock:
    """Slack's native 👍 / 👎 under an answer; a click on the other one replaces the first."""
    return ContextActionsBlock(
        elements=[
            FeedbackButtonsElement(
                action_id=ACTION_FEEDBACK,
                positive_button=FeedbackButtonObject(text=messages.BUTTON_HELPFUL, value=f"helpful:{turn_index}"),
                negative_button=FeedbackButtonObject(
                    text=messages.BUTTON_NOT_HELPFUL, value=f"not_helpful:{turn_index}"
                ),
            )
        ]
    )


def answer_footer(answer: Answer, *, scope: Scope, turn_index: int, basis: str | None = None) -> SlackMessage:
    """What ends a streamed answer (chat.stopStream's blocks): its notices, sources, the applied filters, buttons."""
    blocks = (*_notices(answer), *_answer_tail(answer, scope, turn_index, basis))
    return SlackMessage(text=escape(answer.text)[:FALLBACK_LIMIT], blocks=blocks)


def render_answer(answer: Answer, *, scope: Scope, turn_index: int, basis: str | None = None) -> SlackMessage:
    """The answer with inline citation links, its sources, the applied filters and the buttons."""
    head, tail = _notices(answer), _answer_tail(answer, scope, turn_index, basis)
    blocks = (*head, *_body(answer, room=BLOCK_LIMIT - len(head) - len(tail)), *tail)
    return SlackMessage(text=escape(answer.text)[:FALLBACK_LIMIT], blocks=blocks)


def _body(answer: Answer, *, room: int) -> list[Block]:
    """The answer itself: one `markdown` block when it holds a table (mrkdwn has none) and fits the block's limit,
    else mrkdwn sections, cut to the room the message has left."""
    if has_table(answer.text):
        markdown = answer_markdown(answer)
        if len(markdown) <= MARKDOWN_LIMIT:
            return [MarkdownBlock(text=markdown)]
    body = split_mrkdwn(answer_mrkdwn(answer)) or [escape(messages.NOT_IN_DOCUMENTS)]
    if len(body) > room:
        body = body[: room - 1] + [messages.ANSWER_CUT]
    return [_section(text) for text in body]


def render_private_offer(value: str) -> SlackMessage:
    """The offer, shown only to a person whose access reaches further than the channel's: a sentence and a button."""
    button = ButtonElement(text=messages.BUTTON_PRIVATE, action_id=ACTION_PRIVATE, value=value)
    blocks = (_section(escape(messages.PRIVATE_OFFER)), ActionsBlock(elements=[button]))
    return SlackMessage(text=messages.PRIVATE_OFFER, blocks=blocks)


def render_notice(text: str) -> SlackMessage:
    """A short message Folio writes itself (errors, progress, confirmations); `text` is mrkdwn already."""
    blocks = tuple(_section(part) for part in split_mrkdwn(text)[:BLOCK_LIMIT])
    return SlackMessage(text=text[:FALLBACK_LIMIT], blocks=blocks)


def render_question(question: str, *, user: str, scope: Scope, thorough: bool) -> SlackMessage:
    """The public restatement of an `/ask` question, with who asked and which filters apply."""
    text = messages.asked(user, escape(question))
    blocks: list[Block] = [_section(part) for part in split_mrkdwn(text)[: BLOCK_LIMIT - 1]]
    blocks.append(_context(filters_line(scope) + (" · thorough" if thorough else "")))
    return SlackMessage(text=text[:FALLBACK_LIMIT], blocks=tuple(blocks))


# --- standard markdown, for streams ----------------------------------------------------------------------------------
_MARKDOWN_SPECIAL = re.compile(r"([\\\[\]<>&!])")
_URL_UNSAFE = {" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E", "|": "%7C"}  # | would end a table cell
_WORD_JOINER = "\u2060"


def escape_markdown(text: str) -> str:
    """Model text made inert for standard markdown, its own formatting (bold, lists, headings) kept.

    Brackets and angle brackets are backslash-escaped, so the text makes no link (`[x](url)`), no autolink and no
    `<!channel>`/`<@U…>`; `!` too, so that no citation link after it becomes an image. An invisible word joiner
    after `@` keeps `@here` and `@channel` from being mentions."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text).replace("@", "@" + _WORD_JOINER)


def markdown_url(url: str) -> str:
    """A URL made safe as a markdown link destination."""
    return "".join(_URL_UNSAFE.get(char, char) for char in url)


def citation_markdown(citation: Citation) -> str:
    """`[[1]](url)`: the label as a link to its page (balanced brackets are allowed in link text), or `\\[1\\]`."""
    label = f"[{citation.label}]"
    return f"[{label}]({markdown_url(citation.url)})" if citation.url else escape_markdown(label)


def answer_markdown(answer: Answer) -> str:
    """The whole answer as standard markdown, each `[n]` a link to its page."""
    by_label = {citation.label: citation for citation in answer.citations}
    parts: list[str] = []
    position = 0
    for marker in sorted(answer.markers, key=lambda span: span.start):
        if marker.start < position or marker.label not in by_label:
            continue
        parts.append(escape_markdown(answer.text[position : marker.start]))
        parts.append(citation_markdown(by_label[marker.label]))
        position = marker.end
    parts.append(escape_markdown(answer.text[position:]))
    return "".join(parts) or escape_markdown(messages.NOT_IN_DOCUMENTS)
