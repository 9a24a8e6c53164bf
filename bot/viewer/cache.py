"""Drawn pages kept on disk: `<documents>/.pages/<container>/<file>/<version>-<page>.png`, at most `limit` bytes.

The version is the kept copy's modification time and size: a copy indexed again draws anew, and the pages of the old
one are deleted the moment a page of the new one is drawn (`DocumentStore` also drops the folder when it replaces or
removes the copy). Past the limit the pages least recently shown go first. Files are written beside their place and
renamed in, so a reader never sees half an image; two processes drawing one page at once both write the same bytes.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from bot.documents import DocumentStore, private_folder
from bot.viewer.pages import draw

DEFAULT_LIMIT = 256 * 1024 * 1024


@dataclass(frozen=True)
class PageCache:
    """The store whose copies are drawn, and how many bytes of drawn pages may be kept."""

    store: DocumentStore
    limit: int = DEFAULT_LIMIT

    async def image(self, container: str, file: str, copy: Path, page: int) -> bytes:
        """The PNG of `page` of the kept copy `copy` of `container/file`, drawn now or read from the cache."""
        folder = self.store.pages_folder(container, file)
        if folder is None:
            return await asyncio.to_thread(draw, copy, page)
        version = _version(copy)
        path = folder / f"{version}-{page}.png"
        cached = await asyncio.to_thread(_read_touching, path)
        if cached is not None:
            return cached
        image = await asyncio.to_thread(draw, copy, page)
        await asyncio.to_thread(self._keep, folder, version, path, image)
        return image

    def _keep(self, folder: Path, version: str, path: Path, image: bytes) -> None:
        private_folder(folder)
        for old in folder.glob("*.png"):
            if not old.name.startswith(f"{version}-"):
                old.unlink(missing_ok=True)  # drawn from a copy since replaced
        temporary = folder / f".part-{secrets.token_hex(8)}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(image)
        os.replace(temporary, path)
        _bound(folder.parent.parent, self.limit)


def _version(copy: Path) -> str:
    status = copy.stat()
    return f"{status.st_mtime_ns:x}-{status.st_size:x}"


def _read_touching(path: Path) -> bytes | None:
    """The cached image, its time refreshed (the least recently shown go first), or None."""
    try:
        data = path.read_bytes()
        os.utime(path)
    except OSError:
        return None
    return data


def _bound(root: Path, limit: int) -> None:
    """Delete the least recently shown pages under `root` until they hold at most `limit` bytes."""
    pages = []
    for path in root.glob("*/*/*.png"):
        try:
            status = path.stat()
        except OSError:
            continue
        pages.append((status.st_mtime, status.st_size, path))
    total = sum(size for _, size, _ in pages)
    for _, size, path in sorted(pages):
        if total <= limit:
            break
        path.unlink(missing_ok=True)
        total -= size
