"""The one lock every PDFium call in a process takes. Imports nothing of ours.

PDFium is not thread-safe, "not even with different documents" (pypdfium2's documentation): ingest reading a shared
file's text and the viewer drawing a page in the same process must never call it at once, so both take this lock.
"""

from __future__ import annotations

import threading

PDFIUM = threading.Lock()
