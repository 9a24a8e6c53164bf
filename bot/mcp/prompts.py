"""What an agent's model reads about Folio: the server's instructions, each tool's and argument's description.

They live in descriptions.yaml beside this module, written for a model; this module only loads them.
"""

from __future__ import annotations

from pathlib import Path

import yaml

_TEXTS: dict[str, str] = yaml.safe_load((Path(__file__).with_name("descriptions.yaml")).read_text(encoding="utf-8"))

INSTRUCTIONS = _TEXTS["instructions"].strip()
SEARCH = _TEXTS["search"].strip()
READ_PAGE = _TEXTS["read_page"].strip()
ASK = _TEXTS["ask"].strip()
QUERY = _TEXTS["query"].strip()
TAGS = _TEXTS["tags"].strip()
DOCUMENT = _TEXTS["document"].strip()
PAGE = _TEXTS["page"].strip()
QUESTION = _TEXTS["question"].strip()
