"""Text files' bytes -> text, by one rule, never by replacement characters. Pure functions.

The rule, first that applies:
1. A byte-order mark names the encoding (UTF-8, UTF-16 or UTF-32).
2. Strict UTF-8.
3. UTF-16 without a mark, when NUL bytes fill the odd (little-endian) or even (big-endian) positions.
4. Windows-1252 (which holds every printable Latin-1 character, and so covers Latin-1 files too).
A candidate counts only when it decodes strictly and the text has no control characters besides tab, line and page
breaks; a file no candidate reads is reported by name ("not text in UTF-8, UTF-16 or Windows-1252").
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BOMS = (  # longest first: a UTF-32 LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")  # C0 (but \t \n \v \f \r), DEL and C1
_NAMES = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8",
    "utf-16": "UTF-16",
    "utf-16-le": "UTF-16",
    "utf-16-be": "UTF-16",
    "utf-32": "UTF-32",
    "cp1252": "Windows-1252",
}
NUL_SHARE = 0.3  # of the bytes at the odd or even positions, for rule 3


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # the name people know: UTF-8, UTF-16, Windows-1252


def decode_text(data: bytes) -> Decoded | None:
    """The text of a text file's bytes by the rule above, or None when it is not text in any of them."""
    for codec in _candidates(data):
        try:
            text = data.decode(codec)
        except (UnicodeDecodeError, UnicodeError):
            continue
        if not _CONTROL.search(text):
            return Decoded(text=text, encoding=_NAMES[codec])
    return None


def _candidates(data: bytes) -> list[str]:
    for mark, codec in _BOMS:
        if data.startswith(mark):
            return [codec]
    candidates = ["utf-8"]
    sample = data[:4096]
    if len(sample) >= 2:
        odd, even = sample[1::2], sample[0::2]
        if odd.count(0) > NUL_SHARE * len(odd):
            candidates.append("utf-16-le")
        elif even.count(0) > NUL_SHARE * len(even):
            candidates.append("utf-16-be")
    candidates.append("cp1252")
    return candidates
