"""OData filters for Azure AI Search, built by pure functions from a Scope.

Field names come from an allow-list, never from input; every string literal doubles its single quotes, which is the
only escape OData string literals have. The container clause is always first and always present, and everything
after it is AND-ed to it, so no tag value can widen a search beyond its containers.

    search.in(container, 'finance|legal', '|') and tags/any(t: t eq 'year:2025')
    container eq 'legal' and (tags/any(t: t eq 'year:2025') or tags/any(t: t eq 'year:2026'))
        and tags/any(t: t eq 'department:legal')
"""

from __future__ import annotations

from collections.abc import Iterable

from bot import messages
from bot.errors import InvalidInput
from bot.models import TAG_KEY, Chunk, Scope, Tag

# Index fields a filter may name. Anything else is a programming error, not user input.
FILTERABLE = frozenset({"container", "file", "tags", "page", "tabular", "doc_date"})


def literal(value: str) -> str:
    """An OData string literal: `O'Brien` -> `'O''Brien'`."""
    return "'" + value.replace("'", "''") + "'"


def equals(field: str, value: str) -> str:
    """`field eq 'value'` for an allow-listed field."""
    if field not in FILTERABLE:
        raise ValueError(f"{field!r} is not a filterable field")
    return f"{field} eq {literal(value)}"


def tag_term(tag: Tag) -> str:
    """The stored form of a tag in the index's `tags` collection: `key:value`."""
    return f"{tag.key}:{tag.value}"


def check_tag_keys(scope: Scope) -> None:
    """InvalidInput when a tag key is not of the accepted form (lower-case letters, digits, underscore)."""
    for tag in scope.tags:
        if not TAG_KEY.match(tag.key):
            raise InvalidInput(messages.bad_tag_key(tag.key))


def one_of(field: str, values: tuple[str, ...]) -> str:
    """`field eq 'a'` for one value, `search.in(field, 'a|b', '|')` for several, with a delimiter no value holds."""
    if field not in FILTERABLE:
        raise ValueError(f"{field!r} is not a filterable field")
    if len(values) == 1:
        return equals(field, values[0])
    delimiter = next((d for d in SEARCH_IN_DELIMITERS if not any(d in value for value in values)), None)
    if delimiter is None:  # every candidate occurs in some value: spell the alternatives out
        return "(" + " or ".join(equals(field, value) for value in values) + ")"
    return f"search.in({field}, {literal(delimiter.join(values))}, {literal(delimiter)})"


SEARCH_IN_DELIMITERS = ("|", ",", ";", "~", "^")


def scope_filter(scope: Scope) -> str:
    """The OData filter of a Scope: containers first, then one group per tag key (OR within a key, AND across)."""
    check_tag_keys(scope)
    clauses = [one_of("container", scope.containers)]
    for key, values in scope.tags_by_key().items():
        alternatives = [f"tags/any(t: t eq {literal(tag_term(Tag(key=key, value=value)))})" for value in values]
        clauses.append(alternatives[0] if len(alternatives) == 1 else "(" + " or ".join(alternatives) + ")")
    return " and ".join(clauses)


def file_filter(container: str, file: str) -> str:
    """The chunks of one file in one container."""
    return f"{equals('container', container)} and {equals('file', file)}"


def passage_filters(shown: Iterable[Chunk]) -> dict[str, str]:
    """Container -> the filter of the files and pages these passages came from (for reading them back)."""
    files: dict[str, set[str]] = {}
    pages: dict[str, set[int | None]] = {}
    for chunk in shown:
        files.setdefault(chunk.container, set()).add(chunk.file)
        pages.setdefault(chunk.container, set()).add(chunk.page)
    return {
        container: " and ".join(
            [
                scope_filter(Scope(containers=(container,))),
                one_of("file", tuple(sorted(files[container]))),
                _pages(pages[container]),
            ]
        )
        for container in files
    }


def _pages(pages: set[int | None]) -> str:
    said = [f"page eq {page}" if page is not None else "page eq null" for page in sorted(pages, key=lambda p: p or 0)]
    return "(" + " or ".join(said) + ")"
