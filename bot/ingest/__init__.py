"""Ingestion: files -> pages -> chunks that keep their page number -> an index (any IndexWriter)."""

from bot.errors import UnreadableFile
from bot.ingest.pipeline import Collected, IndexOptions, IndexReport, collect_files, gone_files, index_files
from bot.ingest.readers import Document, read_document

__all__ = [
    "Collected",
    "Document",
    "IndexOptions",
    "IndexReport",
    "UnreadableFile",
    "collect_files",
    "gone_files",
    "index_files",
    "read_document",
]
