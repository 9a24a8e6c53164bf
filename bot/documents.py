"""Folio's own copies of indexed files, and the signed links that open them.

    FOLIO_DATA_DIR/documents/<container>/<file>            one copy per indexed file, replaced on re-index
    FOLIO_DATA_DIR/documents/.removed/<container>/<file>   when a removed file was taken out (links answer 410)
    FOLIO_DATA_DIR/documents/.read/<container>/<file>      how a copy was made: "OCR (3 pages)", "LibreOffice"
    FOLIO_DATA_DIR/documents/.tables/<container>/<file>    a spreadsheet's cells (.xlsx) beside its PDF, for the viewer
    FOLIO_DATA_DIR/documents/.pages/<container>/<file>/    the viewer's drawn pages, dropped with the copy they show
    /documents/<container>/<file>?expires=<unix>&signature=<hex>

The copy lets a citation keep working after the source file moves; removing a document deletes it and leaves a
note, so a link posted before says the document was removed. Folders are made private (0700), copies 0600: they
hold every container's full text. A link is signed with HMAC-SHA256 over the
container, the file and the expiry, so only Folio can make one and nobody can stretch its lifetime or point it at
another file. Signing and checking are pure functions; `DocumentStore` and `link_key` do the file I/O.
`Links` is the citation-link policy as a value: where a citation of a passage points.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlencode

from bot.models import Chunk
from bot.viewer.links import cited_in, view_path

log = logging.getLogger(__name__)

ROUTE_PREFIX = "/documents"
KEY_FILE = "link.key"
REMOVED = ".removed"  # beside the containers; no container name starts with a dot
READ = ".read"  # how each copy was made ("OCR (3 pages)", "LibreOffice"), for `folio list`
TABLES = ".tables"  # a spreadsheet's workbook: its kept copy is LibreOffice's print, where cells are cut and dates ###
PAGES = ".pages"  # drawn page images (bot.viewer.cache), one folder per document
_FORBIDDEN = ("/", "\\", "\0")
_MAX_NAME = 255  # the longest file name common file systems allow


def valid_name(name: str) -> bool:
    """True for a plain file or folder name: not empty, not `.` or `..`, no separator or NUL."""
    return 0 < len(name) <= _MAX_NAME and name not in (".", "..") and not any(char in name for char in _FORBIDDEN)


# --- signed links (pure) ------------------------------------------------------------------------------------------
def signature(key: bytes, container: str, file: str, expires: int) -> str:
    """The hex HMAC-SHA256 of one link; NUL separators keep `a` + `b/c` apart from `a/b` + `c`."""
    message = f"{container}\0{file}\0{expires}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def document_path(container: str, file: str) -> str:
    """`/documents/<container>/<file>` with both names percent-encoded (a `/` inside a name stays encoded)."""
    return f"{ROUTE_PREFIX}/{quote(container, safe='')}/{quote(file, safe='')}"


def signed_path(key: bytes, container: str, file: str, *, expires: int, page: int | None = None) -> str:
    """The path and query of a signed link, with `#page=N` when a page is given."""
    query = urlencode({"expires": expires, "signature": signature(key, container, file, expires)})
    fragment = f"#page={page}" if page is not None else ""
    return f"{document_path(container, file)}?{query}{fragment}"


@dataclass(frozen=True)
class LinkCheck:
    """Why a signed link was refused (`ok` when it was not)."""

    ok: bool
    reason: str = ""


def check_link(key: bytes, container: str, file: str, *, expires: str, given: str, now: float) -> LinkCheck:
    """Whether a request's names, expiry and signature make a link Folio signed and that has not expired."""
    if not (valid_name(container) and valid_name(file)):
        return LinkCheck(False, "bad name")
    if not expires.isdigit() or len(expires) > 12:
        return LinkCheck(False, "bad expiry")
    expected = signature(key, container, file, int(expires))
    # compare_digest takes the same time wherever the strings differ: no guessing a signature byte by byte.
    if not hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace")):
        return LinkCheck(False, "bad signature")
    if int(expires) < now:
        return LinkCheck(False, "expired")
    return LinkCheck(True)


def derive_key(*, link_secret: str | None, slack_signing_secret: str | None) -> bytes | None:
    """FOLIO_LINK_SECRET as given, else a key derived from SLACK_SIGNING_SECRET, else None (generate one).

    The derived key is an HMAC of the Slack secret, so a leaked link signature says nothing about that secret.
    """
    if link_secret:
        return link_secret.encode()
    if slack_signing_secret:
        return hmac.new(slack_signing_secret.encode(), b"folio document links", hashlib.sha256).digest()
    return None


# --- files (I/O) --------------------------------------------------------------------------------------------------
def link_key(data_dir: Path, *, link_secret: str | None, slack_signing_secret: str | None) -> bytes:
    """The link-signing key: from the settings when they give one, else a random key kept in `data_dir/link.key`."""
    derived = derive_key(link_secret=link_secret, slack_signing_secret=slack_signing_secret)
    if derived is not None:
        return derived
    path = data_dir / KEY_FILE
    if not path.exists():
        _create_key_file(path)
    return bytes.fromhex(path.read_text(encoding="ascii").strip())


def _create_key_file(path: Path) -> None:
    """Write a new random key readable by its owner only; a concurrent writer's key wins if it came first."""
    private_folder(path.parent)
    temporary = path.with_name(f".{KEY_FILE}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(32))
        os.link(temporary, path)  # atomic and fails when the file exists: two processes never hold different keys
    except FileExistsError:
        pass
    finally:
        temporary.unlink(missing_ok=True)


class DocumentStore:
    """A folder holding one copy of every indexed file, by container: `<folder>/<container>/<file>`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path_for(self, container: str, file: str) -> Path | None:
        """Where the copy of `file` lives (whether or not it exists); None for a name that could leave the folder."""
        return self._inside(self.folder, container, file)

    def _inside(self, folder: Path, container: str, file: str) -> Path | None:
        if not (valid_name(container) and valid_name(file)) or container.startswith("."):
            return None
        root = folder.resolve()
        path = (root / container / file).resolve()
        return path if path.parent.parent == root else None

    def removed(self, container: str, file: str) -> str | None:
        """When `file` was removed from `container` (ISO time), or None when it was not (or was indexed again)."""
        note = self._inside(self.folder / REMOVED, container, file)
        if note is None or not note.is_file():
            return None
        try:
            return note.read_text(encoding="utf-8").strip()
        except OSError:
            return None

    def stored(self, container: str, file: str) -> Path | None:
        """The copy of `file` when it exists."""
        path = self.path_for(container, file)
        return path if path is not None and path.is_file() else None

    async def keep(self, container: str, file: str, source: Path) -> bool:
        """Copy `source` in as `container/file`, replacing an older copy at once; False (logged) when it cannot."""
        path = self.path_for(container, file)
        if path is None:
            log.warning("no document link for %s/%s: the name cannot be stored safely", container, file)
            return False
        note = self._inside(self.folder / REMOVED, container, file)
        try:
            await self._drop_pages(container, file)  # drawn from the old copy
            await asyncio.to_thread(_copy_replacing, source, path)
            if note is not None:
                await asyncio.to_thread(note.unlink, missing_ok=True)  # indexed again: links open it again
        except OSError as exc:
            log.warning("no document link for %s/%s: copying %s failed (%s)", container, file, source, exc)
            return False
        return True

    async def keep_data(self, container: str, file: str, data: bytes) -> bool:
        """Keep `data` (a converted or OCR'd PDF, a web page's text) as the copy of `file`; False when it cannot."""
        with tempfile.TemporaryDirectory(prefix="folio-copy-") as work:
            source = Path(work) / "copy"
            await asyncio.to_thread(source.write_bytes, data)
            return await self.keep(container, file, source)

    async def keep_workbook(self, container: str, file: str, data: bytes | None) -> None:
        """Keep a spreadsheet's cells beside its PDF copy (None: the file is no spreadsheet, any old one goes)."""
        path = self._inside(self.folder / TABLES, container, file)
        if path is None:
            return
        if data is None:
            await asyncio.to_thread(path.unlink, missing_ok=True)
            return
        with tempfile.TemporaryDirectory(prefix="folio-copy-") as work:
            source = Path(work) / "workbook"
            await asyncio.to_thread(source.write_bytes, data)
            await asyncio.to_thread(_copy_replacing, source, path)

    def workbook(self, container: str, file: str) -> Path | None:
        """The kept workbook of a spreadsheet, when there is one."""
        path = self._inside(self.folder / TABLES, container, file)
        return path if path is not None and path.is_file() else None

    def pages_folder(self, container: str, file: str) -> Path | None:
        """Where the viewer keeps the pages it drew of `file` (whether or not any were drawn)."""
        return self._inside(self.folder / PAGES, container, file)

    async def _drop_pages(self, container: str, file: str) -> None:
        folder = self.pages_folder(container, file)
        if folder is not None:
            await asyncio.to_thread(shutil.rmtree, folder, ignore_errors=True)

    async def note_read(self, container: str, file: str, how: str) -> None:
        """Remember how the copy of `file` was made (nothing when it was read as itself)."""
        note = self._inside(self.folder / READ, container, file)
        if note is None:
            return
        if how:
            await asyncio.to_thread(_write_private, note, how)
        else:
            await asyncio.to_thread(note.unlink, missing_ok=True)

    def read_as(self, container: str, file: str) -> str:
        """How the copy of `file` was made ("OCR (3 pages)", "LibreOffice"), or "" when read as itself."""
        note = self._inside(self.folder / READ, container, file)
        try:
            return note.read_text(encoding="utf-8").strip() if note is not None and note.is_file() else ""
        except OSError:
            return ""

    async def delete(self, container: str, file: str) -> None:
        """Remove the copy of `file`, if there is one (and the note of how it was made, its workbook, its pages)."""
        kept = (
            self.path_for(container, file),
            *(self._inside(self.folder / name, container, file) for name in (READ, TABLES)),
        )
        for path in kept:
            if path is not None:
                await asyncio.to_thread(path.unlink, missing_ok=True)
        await self._drop_pages(container, file)

    async def remove(self, container: str, file: str, *, at: str) -> None:
        """Delete the copy of `file` and note that it was removed `at` (links to it then answer 410 Gone)."""
        await self.delete(container, file)
        note = self._inside(self.folder / REMOVED, container, file)
        if note is not None:
            await asyncio.to_thread(_write_private, note, at)


def private_folder(path: Path) -> None:
    """Create `path` and its missing parents readable by the owner only (0700); an existing folder is left as is."""
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)  # mkdir's mode passes through the umask, which may not be 077


def _copy_replacing(source: Path, target: Path) -> None:
    # Copy beside the target, then rename over it: a reader never sees half a file.
    private_folder(target.parent)
    temporary = target.with_name(f".part-{secrets.token_hex(8)}")  # short: a long name must still fit
    try:
        shutil.copyfile(source, temporary)
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _write_private(path: Path, text: str) -> None:
    private_folder(path.parent)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)


# --- the link policy ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Links:
    """Where a citation points, first that applies:

    1. `docs_base_url`: the organisation serves the files itself: `<base>/<file>#page=N`.
    2. `public_url` and `key`: a link to Folio's viewer of its own copy (the page with the passage highlighted, a
       table's rows), signed, valid `ttl_days` from the moment it is rendered.
    3. `file_links`: `file://` to Folio's copy; it opens only on this machine, so for the terminal alone.
    Otherwise, or when Folio holds no copy of the file, a citation carries no link (a link would only fail).
    """

    docs_base_url: str | None = None
    documents: DocumentStore | None = None
    public_url: str | None = None
    key: bytes | None = field(default=None, repr=False)  # never in logs
    ttl_days: int = 30
    file_links: bool = False
    clock: Callable[[], float] = time.time

    def link_for(self, chunk: Chunk) -> str | None:
        """The URL that opens `chunk`'s document at its page, or None."""
        if self.docs_base_url:
            return _at_page(self.docs_base_url.rstrip("/") + "/" + quote(chunk.file), chunk)
        signed = bool(self.public_url and self.key is not None)
        if self.documents is None or not (signed or self.file_links):
            return None  # no link could be made: the disk need not be asked (this runs for every source shown)
        copy = self.documents.stored(chunk.container, chunk.file)
        if copy is None:
            return None
        if signed and self.key is not None and self.public_url is not None:
            expires = int(self.clock()) + self.ttl_days * 86400
            path = view_path(self.key, chunk.container, chunk.file, expires=expires, cited=cited_in(chunk))
            return self.public_url.rstrip("/") + path
        return _at_page(copy.as_uri(), chunk) if self.file_links else None

    @property
    def reach_people(self) -> bool:
        """Whether people outside this machine can open the links (false: citations in Slack carry none)."""
        return bool(self.docs_base_url or (self.public_url and self.key is not None and self.documents is not None))


def _at_page(url: str, chunk: Chunk) -> str:
    """`url#page=N` where the citation shows a page; tables and text files open at the top."""
    page = chunk.cited_page
    return url if page is None else f"{url}#page={page}"
