"""An e-mail message (.eml): its subject, sender, date, body text and attachments. Pure (stdlib `email`).

The body is the plain-text part, else the HTML part's text; attachments come back as (name, bytes) for the
pipeline to index as files of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from pathlib import PurePath

from bot.ingest.html import page_text


@dataclass(frozen=True)
class Mail:
    subject: str
    sender: str
    date: str | None  # ISO date of the Date header
    text: str  # the header lines people read, then the body
    attachments: tuple[tuple[str, bytes], ...]


def read_mail(data: bytes) -> Mail:
    """The message in `data` (RFC 5322 bytes)."""
    message = BytesParser(policy=policy.default).parsebytes(data)
    assert isinstance(message, EmailMessage)
    subject = _header(message, "subject")
    sender = _header(message, "from")
    day = _date(_header(message, "date"))
    heads = [
        f"{label}: {value}"
        for label, value in (
            ("Subject", subject),
            ("From", sender),
            ("To", _header(message, "to")),
            ("Date", _header(message, "date")),
        )
        if value
    ]
    text = "\n".join(heads) + "\n\n" + _body(message)
    return Mail(subject=subject, sender=sender, date=day, text=text.strip(), attachments=tuple(_attachments(message)))


def _header(message: EmailMessage, name: str) -> str:
    try:
        return " ".join(str(message.get(name, "") or "").split())
    except (ValueError, TypeError, IndexError):  # a malformed header reads as absent, not as a failed file
        return ""


def _date(value: str) -> str | None:
    try:
        return parsedate_to_datetime(value).date().isoformat() if value else None
    except (ValueError, TypeError, IndexError):
        return None


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):  # an unknown charset
        payload = part.get_payload(decode=True) or b""
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
    return page_text(content).text if part.get_content_subtype() == "html" else str(content).strip()


def _attachments(message: EmailMessage) -> list[tuple[str, bytes]]:
    found = []
    for number, part in enumerate(message.iter_attachments(), start=1):
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes) or not data:
            continue
        name = PurePath((part.get_filename() or f"attachment-{number}").replace("\\", "/")).name  # never a path
        found.append((name or f"attachment-{number}", data))
    return found
