"""The error tree drawn in bot/errors.py's docstring is complete and drawn as the classes inherit."""

from __future__ import annotations

import inspect
import re

from bot import errors


def drawn() -> dict[str, str | None]:
    """Each class named in the docstring's tree -> its parent there (None for the root), by indentation."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        found = re.match(r"^(?P<lead>[\s│├└─]*)(?P<name>[A-Z]\w+)\s", line)
        if found is None or found["name"] not in vars(errors):
            continue
        depth = len(found["lead"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[found["name"]] = stack[-1][1] if stack else None
        stack.append((depth, found["name"]))
    return parents


def test_every_error_class_is_drawn_under_its_parent() -> None:
    classes = {name: cls for name, cls in vars(errors).items() if inspect.isclass(cls) and issubclass(cls, Exception)}
    actual = {name: (None if cls is errors.FolioError else cls.__bases__[0].__name__) for name, cls in classes.items()}
    assert drawn() == actual
