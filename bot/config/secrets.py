"""Secrets in every form they are written: the Redis password wherever redis-py reads it, and each secret as a log
line may spell it (escaped by JSON or by `repr`, quoted in a URL). Pure functions.

redis-py takes the password from the URL's user part (`redis://:PW@host`, `redis://user:PW@host`) and from its query
(`redis://host/0?password=PW`), %-decoding either (the query twice: `parse_qs`, then `unquote`).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

MASK = "***"
SHORTEST_SECRET = 6  # shorter values would mask ordinary words


def redis_passwords(url: str | None) -> tuple[str, ...]:
    """Every spelling of the password(s) `url` gives redis-py: as written, and as decoded."""
    if not url:
        return ()
    parts = urlsplit(url)
    found: list[str] = []
    user_part = parts.netloc.rpartition("@")[0]
    if ":" in user_part:
        found.append(user_part.split(":", 1)[1])
    found += [value for name, value in parse_qsl(parts.query, keep_blank_values=False) if name == "password"]
    found += [value for name, value in _raw_query(parts.query) if name == "password" and value is not None]
    decoded = [unquote(value) for value in found] + [unquote(unquote(value)) for value in found]
    return tuple(dict.fromkeys(value for value in found + decoded if value))


def redacted_url(url: str) -> str:
    """`url` with every credential redis-py would read shown as ***; the rest as written (even a bad port)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    user_part, at, where = netloc.rpartition("@")
    if at and ":" in user_part:
        netloc = f"{user_part.split(':', 1)[0]}:{MASK}@{where}"
    query = "&".join(
        f"{name}={MASK}" if unquote(name) == "password" else (f"{name}={value}" if value is not None else name)
        for name, value in _raw_query(parts.query, keep_bare=True)
    )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _raw_query(query: str, *, keep_bare: bool = False) -> list[tuple[str, str | None]]:
    """The query's `name=value` pairs as written (not decoded)."""
    pairs: list[tuple[str, str | None]] = []
    for piece in query.split("&"):
        name, equals, value = piece.partition("=")
        if equals:
            pairs.append((name, value))
        elif keep_bare and piece:
            pairs.append((name, None))
    return pairs


def written_forms(secret: str) -> tuple[str, ...]:
    """`secret` and the forms a log line may write it in: inside JSON (either escaping), inside a `%r`, quoted in
    a URL; and those forms escaped once more (a repr inside JSON). Longest first, so a longer form masks whole."""
    once = {secret, *(_escaped(secret))}
    forms = once | {twice for form in once for twice in _escaped(form)}
    return tuple(sorted((form for form in forms if len(form) >= SHORTEST_SECRET), key=len, reverse=True))


def _escaped(text: str) -> tuple[str, ...]:
    return (
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        repr(text)[1:-1],
        quote(text, safe=""),
        quote_plus(text),
    )
