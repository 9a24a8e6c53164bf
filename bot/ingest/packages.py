"""Office files that are zip packages (.docx, .xlsx, .pptx and OpenDocument): how much they unpack to, told by the
package's own directory before anything opens it.

A package of a few hundred kilobytes can unpack to gigabytes (a zip bomb): openpyxl would hold a shared-string table
of that size in memory, LibreOffice would parse it for minutes. The sizes the directory declares are a real bound:
Python's zipfile stops reading a part at its declared size (and then fails its CRC), and LibreOffice refuses a package
whose parts are longer than declared, so a package cannot unpack to more than it says.
"""

from __future__ import annotations

import io
import zipfile

MEGABYTE = 1024 * 1024


def unpacked_bytes(data: bytes) -> int | None:
    """The sum of the sizes the package's directory declares for its parts; None when `data` is no readable zip (an
    .xls, a password-protected package: its reader says what it is)."""
    if not data.startswith(b"PK"):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            return sum(part.file_size for part in package.infolist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError):
        return None
