"""Validators for Responses API bodies, built once per process from OpenAI's published OpenAPI document.

The document is 2.3 MB: it is parsed and its validators are built on first use only, then shared.
"""

from __future__ import annotations

import json
import threading
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPEC = Path(__file__).resolve().parents[3] / "shared" / "specs" / "openai" / "openapi.json"
_URI = "urn:openai-openapi"
_lock = threading.Lock()


@cache
def _registry() -> Registry:
    document = json.loads(SPEC.read_text(encoding="utf-8"))
    return Registry().with_resource(_URI, Resource.from_contents(document, default_specification=DRAFT202012))


@cache
def _validator(schema_name: str) -> Draft202012Validator:
    schema = {"$ref": f"{_URI}#/components/schemas/{schema_name}"}
    return Draft202012Validator(schema, registry=_registry())


def problems(body: object, schema_name: str) -> list[str]:
    """Each way `body` breaks `components.schemas[schema_name]`, as `path: message` lines; empty when valid."""
    with _lock:  # building is not thread-safe; validating is cheap next to it
        validator = _validator(schema_name)
    found = []
    for error in validator.iter_errors(body):
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        # oneOf/anyOf failures say only "not valid under any"; the closest branch says why.
        detail = best_match(error.context) if error.context else None
        why = f" ({'/'.join(map(str, detail.absolute_path))}: {detail.message[:200]})" if detail else ""
        found.append(f"{schema_name} {where}: {error.message[:200]}{why}")
    return found
