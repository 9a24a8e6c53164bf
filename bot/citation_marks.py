"""What the model writes that the citation rule reads: markers, plain labels, links and sandbox paths. Pure.

`TOKEN` finds each of them in a text; `undecided_from` says where a text still being written could yet turn into
one, so the streaming check holds that tail back. `bot.citation_stream.CitationStream` applies the rule, and
`bot.citations.render` is that same stream fed the whole text: the two cannot disagree.

Every pattern is bounded and none crosses a line end: unbounded, a model writing "[[[[..." costs quadratic time, and
a stream would have to hold an answer back for ever.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Literal

from bot.models import Chunk, Citation, CitedPassage, display_name

# Anything a reader could take for a source marker: an opening bracket (ASCII, full-width, CJK or mathematical), S
# (or a letter that looks like it) and a number in any case, spacing, width or script, up to the closing bracket on
# that line. [S3], [s3], [S 3], [S3, S7], [S3; S7], [S1-S3], [S1–S3], ［S3］, 【S3】, [S٣], [S³], [S\u200b3],
# [S3, page 4]: each is read as markers, and what names no shown source is removed. Left unclosed ("[S3 and a long
# aside ..."), the opening bracket and its id are read as a marker all the same.
OPENERS = "[［【〔〖〘〚⟦"
CLOSERS = "]］】〕〗〙〛⟧"
_OPEN, _CLOSE, _BRACKETS = re.escape(OPENERS), re.escape(CLOSERS), re.escape(OPENERS + CLOSERS)
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"  # zero-width characters: a reader sees nothing between S and 3
_GAP = rf"[ \t{_INVISIBLE}]{{0,8}}"
_DIGIT = r"[\d¹²³⁰⁴-⁹₀-₉]"  # \d is every script's decimal digits; superscripts and subscripts are not among them
_S = "[SsＳｓЅѕ]"
MARKER = re.compile(rf"[{_OPEN}]{_GAP}{_S}{_GAP}{_DIGIT}{{1,20}}(?:[^{_BRACKETS}\n]{{0,60}}[{_CLOSE}])?")
# A bracketed number the model writes itself ([1], [2, 3], ［4］): with links off a checked citation shows as a plain
# [1], so one the model wrote could pin a claim on a real source. Removed, like a marker naming no shown source.
_NUMBERS = rf"{_DIGIT}{{1,20}}(?:{_GAP}[,;\-–—]{_GAP}{_DIGIT}{{1,20}}){{0,10}}"
LABEL = re.compile(rf"[{_OPEN}]{_GAP}{_NUMBERS}{_GAP}[{_CLOSE}]")
# The instructions ask the model to start with this when the sources do not answer the question.
NOT_ANSWERED = "[NOT_IN_DOCUMENTS]"
_SANDBOX = r"(?:sandbox:)?/mnt/data/"
_PATH_CHAR = rf"[^\s(){_BRACKETS}]"  # a path ends at a space, a parenthesis or any bracket
_FILE_CHAR = rf"[^\s()/{_BRACKETS}]"
# One pass over the text finds the first of these at each place; order matters where two start at one character.
TOKEN = re.compile(
    r"(?P<not_answered>\[NOT_IN_DOCUMENTS\])"
    rf"|(?P<marker>{MARKER.pattern})"  # before links: [S1](https://x) is a citation, then the address in plain text
    rf"|(?P<label>{LABEL.pattern})"
    # a Markdown link or image to a sandbox file: its label alone (a reader cannot open the file)
    rf"|(?P<sandbox_link>!?\[(?P<sandbox_label>[^\]\n]{{0,200}})\]\({_SANDBOX}[^)\n]{{0,500}}\))"
    # a Markdown link or image: shown as its label and its real address, never a label over a link
    r"|(?P<link>!?\[(?P<link_label>[^\]\n]{0,200})\]\([ \t]{0,10}(?P<url>[^()\s]{1,2000})"
    r"(?:[ \t]{1,10}\"[^\"\n]{0,200}\")?[ \t]{0,10}\))"
    # a bare sandbox path: its file name alone
    rf"|(?P<sandbox_path>{_SANDBOX}(?:{_PATH_CHAR}{{0,500}}/)?(?P<sandbox_file>{_FILE_CHAR}{{0,200}}))"
)
# What a link, marker or label can still become while more text comes: a text that fully matches one of these from
# some place on is not decided yet. Each is bounded like the pattern it anticipates.
_LINK_SO_FAR = re.compile(
    r"!?(?:\[[^\]\n]{0,200}(?:\](?:\((?:[^)\n]{0,2000}"
    r"|[ \t]{0,10}[^()\s]{1,2000}[ \t]{1,10}\"[^\"\n]{0,200}\"?[ \t]{0,10})?)?)?)?"
)
_MARKER_SO_FAR = re.compile(rf"[{_OPEN}](?:{_GAP}(?:{_S}(?:{_GAP}(?:{_DIGIT}{{1,20}}[^{_BRACKETS}\n]{{0,60}})?)?)?)?")
_LABEL_SO_FAR = re.compile(rf"[{_OPEN}][ \t{_INVISIBLE}\d¹²³⁰⁴-⁹₀-₉,;\-–—]{{0,260}}")
_SANDBOX_PATH_SO_FAR = re.compile(rf"{_SANDBOX}{_PATH_CHAR}{{0,701}}")
_PREFIXES = ("sandbox:/mnt/data/", "/mnt/data/")
_REF = re.compile(r"(?<![a-z])S\s*(\d+)(?:\s*[-–—]\s*S?\s*(\d+))?", re.IGNORECASE)
_UNSEEN = str.maketrans("", "", _INVISIBLE)
_MAX_RANGE = 10  # [S1-S5] names S1 to S5; a longer range is read as its two ends only

LinkFor = Callable[[Chunk], "str | None"]


def undecided_from(text: str) -> int:
    """Where the tail of `text` that more text could still turn into a link, marker, label or sandbox path starts;
    `len(text)` when everything is decided. `text` starts where a reader of TOKEN would start (not inside a token).
    A half-written marker right before that tail waits with it: if the tail is removed, it goes too."""
    cut = _token_undecided_from(text)
    return half_marker_from(text[:cut]) if cut < len(text) else cut


def _token_undecided_from(text: str) -> int:
    if MAY_HOLD_TOKEN.search(text) is None:  # most deltas: plain words
        return _sandbox_begun(text)
    limit = _sandbox_begun(text)
    pos = 0
    while True:
        token = TOKEN.search(text, pos)
        if token is not None and token.start() >= limit:
            token = None
        end = token.start() if token else limit
        for candidate in _CANDIDATE.finditer(text, pos, end):  # no token starts here yet: more text may make one
            if _open_at(text, candidate.start()):
                return candidate.start()
        if token is None:
            return limit
        if not _decided(token, text) and _open_at(text, token.start()):
            return token.start()
        pos = max(token.end(), token.start() + 1)


def half_marker_from(text: str) -> int:
    """Where `text` ends with the beginnings of markers or labels ("[", "[S", "[1, ", "[["), so that what a removed
    token leaves cannot complete one; `len(text)` when it does not."""
    end = len(text)
    while (opener := max(text.rfind(char, 0, end) for char in OPENERS)) >= 0:
        if not (_MARKER_SO_FAR.fullmatch(text, opener, end) or _LABEL_SO_FAR.fullmatch(text, opener, end)):
            break
        end = opener  # "[[" is two: without the second, the first would still be half a marker
    return end


def _sandbox_begun(text: str) -> int:
    """Where `text` ends with the beginning of a sandbox path (`sandbox:/mn`, `/mnt/da`); `len(text)` if it does not."""
    begun = _SANDBOX_BEGUN.search(text, max(0, len(text) - len(_PREFIXES[0])))
    return begun.start() if begun else len(text)


def _proper_prefixes(word: str) -> str:
    """A pattern matching every proper prefix of `word`, at least one character: s(?:a(?:n)?)? for "sand"."""
    pattern = ""
    for char in reversed(word[:-1]):
        pattern = f"{re.escape(char)}(?:{pattern})?" if pattern else re.escape(char)
    return pattern


_SANDBOX_BEGUN = re.compile(rf"(?:{'|'.join(_proper_prefixes(prefix) for prefix in _PREFIXES)})\Z")
_CANDIDATE = re.compile(rf"[{_OPEN}!]")
MAY_HOLD_TOKEN = re.compile(rf"[{_OPEN}!/]")  # every token holds one of these (a sandbox path its "/")


def _decided(token: re.Match[str], text: str) -> bool:
    """Whether more text could not change this token: it ends in its closing bracket or parenthesis, or (a path)
    something after it ends it."""
    if token.lastgroup == "sandbox_path":
        return token.end() < len(text)
    return token.group()[-1] in CLOSERS + ")"  # a marker left unclosed ends in its digits: a closer may still come


def _open_at(text: str, place: int) -> bool:
    """Whether the text from `place` on is the beginning of something that more text could still complete."""
    char = text[place]
    if char in "s/":  # a sandbox path running to the end of the text: more of its name may come
        return bool(_SANDBOX_PATH_SO_FAR.fullmatch(text, place))
    if char in "![" and _LINK_SO_FAR.fullmatch(text, place):
        return True
    return char != "!" and bool(_MARKER_SO_FAR.fullmatch(text, place) or _LABEL_SO_FAR.fullmatch(text, place))


def marker_refs(text: str) -> list[str]:
    """Every S# named by a marker, in order of appearance, repeats included."""
    return [ref for match in MARKER.finditer(text) for ref in refs_in(match.group())]


def refs_in(marker: str) -> list[str]:
    """The S# ids one marker names: `[s1–S3]` -> S1, S2, S3; `［Ｓ３］` -> S3."""
    refs: list[str] = []
    for match in _REF.finditer(unicodedata.normalize("NFKC", marker).translate(_UNSEEN)):
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        step = 1 if last >= first else -1
        numbers = range(first, last + step, step) if abs(last - first) < _MAX_RANGE else (first, last)
        refs.extend(f"S{number}" for number in numbers)
    return refs


def kind_of(chunk: Chunk) -> Literal["page", "table", "text"]:
    if chunk.tabular:
        return "table"
    return "text" if chunk.page is None else "page"


def citation_for(chunk: Chunk, *, label: int, link_for: LinkFor) -> Citation:
    """The reference a person sees for one chunk."""
    return Citation(
        label=label,
        file=chunk.file,
        title=display_name(chunk.file),
        page=chunk.cited_page,
        container=chunk.container,
        kind=kind_of(chunk),
        url=link_for(chunk),
        rows=place.label if (place := chunk.table_place) else None,
        passages=(relied_on(chunk),),
        updated=chunk.doc_date,
    )


def relied_on(chunk: Chunk) -> CitedPassage:
    """The passage a citation of `chunk` relies on, as it was shown."""
    return CitedPassage(id=chunk.id, fingerprint=chunk.fingerprint)


def labels_for(
    refs: list[str],
    known: Mapping[str, Chunk],
    citations: dict[tuple[str, int | None, str | None], Citation],
    link_for: LinkFor,
    dropped: list[str],
) -> list[int]:
    """The labels these refs show under, numbering new pages in order of first use; unknown refs go to `dropped`."""
    labels: list[int] = []
    for ref in refs:
        chunk = known.get(ref)
        if chunk is None:
            dropped.append(ref)
            continue
        place = chunk.table_place
        key = (chunk.file, chunk.cited_page, place.label if place else None)  # each sheet's rows: a label of their own
        if key not in citations:
            citations[key] = citation_for(chunk, label=len(citations) + 1, link_for=link_for)
        elif (passage := relied_on(chunk)) not in citations[key].passages:  # another passage of the same page
            cited = citations[key]
            citations[key] = cited.model_copy(update={"passages": (*cited.passages, passage)})
        label = citations[key].label
        if label not in labels:
            labels.append(label)
    return labels
