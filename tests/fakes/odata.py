"""The subset of Azure AI Search's OData `$filter` language Folio emits, parsed and evaluated for the fake service.

    container eq 'a''b' and (tags/any(t: t eq 'year:2025') or tags/any(t: t eq 'year:2026')) and not (page gt 3)

Comparisons (eq ne gt ge lt le) of a field with a literal ('string' with '' escapes, numbers, true/false/null),
`and`, `or`, `not`, parentheses, `coll/any(x: <expression on x>)` and `search.in(field, 'a|b', '|')` (each character
of the third argument is a delimiter; without it, space and comma are). Field names are checked against the index:
an unknown or non-filterable field is an error, as on the real service. Anything else is a syntax error, so a filter
that is not well formed fails the test that sent it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Doc = dict[str, Any]
Predicate = Callable[[Doc, dict[str, Any]], bool]  # (document, lambda variables) -> match

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)|(?P<punct>[():,])"
    r"|(?P<name>search\.in|[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*(?:/any|/all)?))"
)
_OPS = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "gt": lambda a, b: a is not None and b is not None and a > b,
    "ge": lambda a, b: a is not None and b is not None and a >= b,
    "lt": lambda a, b: a is not None and b is not None and a < b,
    "le": lambda a, b: a is not None and b is not None and a <= b,
}


class FilterError(ValueError):
    """The filter is not valid OData (or names a field the index cannot filter on)."""


def tokenize(text: str) -> list[tuple[str, Any]]:
    tokens: list[tuple[str, Any]] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise FilterError(f"Invalid expression: syntax error at position {position} in '{text}'.")
        position = match.end()
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "string":
            tokens.append(("literal", value[1:-1].replace("''", "'")))
        elif kind == "number":
            tokens.append(("literal", float(value) if "." in value else int(value)))
        elif kind == "name" and value in ("true", "false", "null"):
            tokens.append(("literal", {"true": True, "false": False, "null": None}[value]))
        else:
            tokens.append((kind, value))
    return tokens


class _Parser:
    def __init__(self, text: str, fields: dict[str, dict[str, Any]]) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.position = 0
        self.fields = fields  # name -> field definition of the index

    def parse(self) -> Predicate:
        predicate = self.or_expression(frozenset())
        if self.position != len(self.tokens):
            self.fail(f"unexpected '{self.tokens[self.position][1]}'")
        return predicate

    def fail(self, why: str) -> None:
        raise FilterError(f"Invalid expression: {why} in '{self.text}'.")

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, kind: str, value: Any = None) -> Any:
        token = self.peek()
        if token is None or token[0] != kind or (value is not None and token[1] != value):
            self.fail(f"expected {value or kind}, found {token[1] if token else 'the end'}")
        self.position += 1
        return token[1]

    def at(self, kind: str, value: Any) -> bool:
        return self.peek() == (kind, value)

    def or_expression(self, scope: frozenset[str]) -> Predicate:
        parts = [self.and_expression(scope)]
        while self.at("name", "or"):
            self.position += 1
            parts.append(self.and_expression(scope))
        return parts[0] if len(parts) == 1 else (lambda doc, env: any(part(doc, env) for part in parts))

    def and_expression(self, scope: frozenset[str]) -> Predicate:
        parts = [self.unary(scope)]
        while self.at("name", "and"):
            self.position += 1
            parts.append(self.unary(scope))
        return parts[0] if len(parts) == 1 else (lambda doc, env: all(part(doc, env) for part in parts))

    def unary(self, scope: frozenset[str]) -> Predicate:
        if self.at("name", "not"):
            self.position += 1
            inner = self.unary(scope)
            return lambda doc, env: not inner(doc, env)
        if self.at("punct", "("):
            self.position += 1
            inner = self.or_expression(scope)
            self.take("punct", ")")
            return inner
        return self.comparison(scope)

    def comparison(self, scope: frozenset[str]) -> Predicate:
        name = self.take("name")
        if name == "search.in":
            return self.search_in(scope)
        if name.endswith("/any") or name.endswith("/all"):
            return self.lambda_expression(name, scope)
        operator = self.take("name")
        if operator not in _OPS:
            self.fail(f"unknown operator '{operator}'")
        value = self.take("literal")
        if name in scope:
            return lambda doc, env: _OPS[operator](env[name], value)
        self.check_field(name, collection=False)
        return lambda doc, env: _OPS[operator](doc.get(name), value)

    def search_in(self, scope: frozenset[str]) -> Predicate:
        self.take("punct", "(")
        name = self.take("name")
        self.take("punct", ",")
        listed = self.take("literal")
        delimiters = " ,"
        if self.at("punct", ","):
            self.position += 1
            delimiters = self.take("literal")
        self.take("punct", ")")
        if not isinstance(listed, str) or not isinstance(delimiters, str) or not delimiters:
            self.fail("search.in takes a field, a string of values and a string of delimiters")
        values = frozenset(re.split("[" + re.escape(delimiters) + "]", listed)) - {""}
        if name in scope:
            return lambda doc, env: env[name] in values
        self.check_field(name, collection=False)
        return lambda doc, env: doc.get(name) in values

    def lambda_expression(self, name: str, scope: frozenset[str]) -> Predicate:
        field, _, quantifier = name.rpartition("/")
        self.check_field(field, collection=True)
        self.take("punct", "(")
        variable = self.take("name")
        self.take("punct", ":")
        body = self.or_expression(scope | {variable})
        self.take("punct", ")")
        test = any if quantifier == "any" else all

        def predicate(doc: Doc, env: dict[str, Any]) -> bool:
            return test(body(doc, {**env, variable: item}) for item in doc.get(field) or [])

        return predicate

    def check_field(self, name: str, *, collection: bool) -> None:
        definition = self.fields.get(name)
        if definition is None:
            self.fail(f"could not find a property named '{name}'")
        if not definition.get("filterable"):
            self.fail(f"the field '{name}' is not filterable")
        if definition["type"].startswith("Collection(") != collection:
            self.fail(f"the field '{name}' {'is not' if collection else 'is'} a collection")


def compile_filter(text: str | None, fields: dict[str, dict[str, Any]]) -> Callable[[Doc], bool]:
    """A function document -> bool for `text` (None or empty matches everything); FilterError when invalid."""
    if not text or not text.strip():
        return lambda doc: True
    predicate = _Parser(text, fields).parse()
    return lambda doc: bool(predicate(doc, {}))
