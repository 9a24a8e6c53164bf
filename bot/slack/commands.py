"""Parsing what people type: `/ask [key:value ...] [--thorough] question`, and the text of a mention. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot import messages
from bot.errors import InvalidInput
from bot.models import Tag
from bot.slack.render import escape

THOROUGH_FLAG = "--thorough"
_FILTER = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)[:=](.*)$")
_VALUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+@-]{0,63}$")


@dataclass(frozen=True)
class AskCommand:
    """A parsed `/ask`: the filters (keys already checked against the policy), the flag and the question."""

    question: str
    tags: tuple[Tag, ...] = ()
    thorough: bool = False

    @property
    def wants_help(self) -> bool:
        return not self.question or self.question.lower() in {"help", "-h", "--help", "?"}


def unescape(text: str) -> str:
    """Undo Slack's escaping of `&`, `<`, `>` in message and command text."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def parse_ask(text: str, *, tag_keys: Sequence[str]) -> AskCommand:
    """Leading `key:value` words whose key is a policy tag key are filters; the rest is the question.

    A word whose key is not a tag key (`container:legal`, `http://...`) stays part of the question, so nobody can
    reach another container or an unlisted field through a filter. Values are restricted to a safe alphabet.
    """
    words = unescape(text).split()
    tags: list[Tag] = []
    thorough = False
    allowed = {key.lower() for key in tag_keys}
    while words:
        word = words[0]
        match = _FILTER.match(word)
        if word.lower() == THOROUGH_FLAG:
            thorough = True
        elif match and match.group(1).lower() in allowed:
            if not _VALUE.match(match.group(2)):
                raise InvalidInput(messages.bad_filter_value(escape(word)))
            tags.append(Tag(key=match.group(1).lower(), value=match.group(2)))
        else:
            break
        words.pop(0)
    if words and words[-1].lower() == THOROUGH_FLAG:  # `--thorough` at the end reads naturally too
        thorough = True
        words.pop()
    return AskCommand(question=" ".join(words), tags=tuple(dict.fromkeys(tags)), thorough=thorough)


def clean_question(text: str, *, bot_user_id: str | None) -> str:
    """The question in a mention or message: Folio's own mention removed, Slack escaping undone, spaces collapsed."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return " ".join(unescape(text).split())
