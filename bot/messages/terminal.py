"""What a person reads at a terminal: indexing, listing, searching and chatting with `folio`."""

from __future__ import annotations

from bot.messages.words import _count

# --- search and indexing (terminal) ----------------------------------------------------------------------------------


def empty_container(container: str) -> str:
    return (
        f"The container {container!r} holds no documents yet. Add some with: folio index PATH --container {container}"
    )


def no_match(scope: str) -> str:
    return f"Nothing in {scope} matches closely enough. Try other words, or fewer tags."


# --- the index -------------------------------------------------------------------------------------------------------
UNSCOPED_SEARCH = (
    "A search needs at least one container; none was given, so nothing was searched. "
    "Tell an admin: the channel policy or access rules named no container here."
)
NOT_TEXT = "{name}: not text in UTF-8, UTF-16 or Windows-1252 (binary content?); save it as UTF-8 text or as a PDF"


def file_too_long(name: str, limit: int) -> str:
    return (
        f"{name}: its text is longer than {limit:,} characters (FOLIO_MAX_FILE_CHARS); "
        "split the file, or raise the limit"
    )


def unpacks_too_large(name: str, size: int, limit_mb: float) -> str:
    return (
        f"{name}: it unpacks to {size / 1024 / 1024:,.0f} MB, more than FOLIO_MAX_UNPACKED_MB ({limit_mb:g} MB) allows "
        "(a file packed this tightly is refused unopened: it may be a zip bomb); raise the limit to read it"
    )


def read_as(name: str, encoding: str) -> str:
    return f"{name}: not UTF-8, read as {encoding}"


def pdf_warnings(name: str, count: int, first: str) -> str:
    problems = f"{count} problem{'s' if count != 1 else ''}"
    return f"{name}: the PDF reader repaired {problems} (first: {first[:120]}); check that its passages read right"


# --- converting and OCR ----------------------------------------------------------------------------------------------
def needs_converter(name: str, program: str, packages: str) -> str:
    """A file skipped because the program that reads it is missing: `deck.pptx (needs LibreOffice: apt-get ...)`."""
    return f"{name} (needs {program}: apt-get install {packages})"


def conversion_failed(name: str, why: str) -> str:
    return f"{name}: LibreOffice could not convert it ({why}); open it in an office program and save it again"


def conversion_timeout(name: str, program: str, seconds: float) -> str:
    return (
        f"{name}: {program} took longer than {seconds:g} s and was stopped (FOLIO_CONVERT_TIMEOUT); "
        "save it again or split it, or raise the limit"
    )


def pages_without_text(name: str, count: int) -> str:
    """Pages with no text where OCR did not run (the issue's own wording)."""
    return f"{name}: {_count(count, 'page')} had no text: scanned? install tesseract-ocr or pass --ocr force"


def no_text_after_ocr(name: str, count: int) -> str:
    return f"{name}: {_count(count, 'page')} had no text, even after OCR (blank pages, or too faint to read)"


def ocr_failed(name: str, why: str) -> str:
    return f"{name}: OCR failed ({why}); check FOLIO_OCR_LANGUAGES, or pass --ocr off to index it without OCR"


def read_by_ocr(name: str, count: int) -> str:
    return f"{name}: {_count(count, 'page')} read by OCR"


def attachment_of(mail: str, attachment: str, why: str) -> str:
    return f"{mail}: attachment {attachment} not indexed: {why}"


def bad_container(name: str) -> str:
    return (
        f"{name!r} cannot be a container name: use letters, digits, '-', '_' and '.', starting with a letter or digit, "
        "with no spaces or '/' (for example hr-policies)."
    )


SHOWN_SKIPPED = 8  # the summary names this many skipped files, then counts the rest


def index_summary(*, files: int, pages: int, passages: int, unchanged: int, failed: int, skipped: list[str]) -> str:
    """`2 files indexed (14 pages, 80 passages), 1 unchanged, 0 failed; skipped 2: notes.docx (unsupported type), ...`"""
    line = (
        f"{_count(files, 'file')} indexed ({_count(pages, 'page')}, {_count(passages, 'passage')}), "
        f"{unchanged} unchanged, {failed} failed"
    )
    if skipped:
        shown = ", ".join(skipped[:SHOWN_SKIPPED])
        more = f", and {len(skipped) - SHOWN_SKIPPED} more" if len(skipped) > SHOWN_SKIPPED else ""
        line += f"; skipped {len(skipped)}: {shown}{more}"
    return line + "."


def skipped_type(name: str) -> str:
    return f"{name} (unsupported type)"


def skipped_link(name: str) -> str:
    return f"{name} (symbolic link; --follow-symlinks to index it)"


def skipped_unreadable(name: str, why: str) -> str:
    return f"{name} (cannot be read: {why}; its files are neither indexed nor pruned)"


def document_removed(file: str, when: str) -> str:
    day = f" on {when[:10]}" if when else ""
    return (
        f"{file} was removed from Folio{day}, so this link no longer opens it. "
        "Ask Folio the question again to see the documents it holds now."
    )


def data_folder_created(path: object) -> str:
    return f"folio: created the data folder {path} (set FOLIO_DATA_DIR to use another)."


def unknown_container(name: str, held: dict[str, int]) -> str:
    """`Container 'benefit' holds no documents. Containers here: benefits (263 passages), sample (24).`"""
    line = f"Container {name!r} holds no documents."
    if held:
        (first, count), *rest = held.items()
        listed = [f"{first} ({_count(count, 'passage')})", *(f"{other} ({number})" for other, number in rest)]
        line += f" Containers here: {', '.join(listed)}. Name one of them, or"
    else:
        line += " To search it,"
    return line + f" add documents: folio index PATH --container {name}"


def pruned(files: list[str]) -> str:
    return f"Removed {_count(len(files), 'file')} no longer in the folder: {', '.join(files)}."


def gone_from_folder(files: list[str], *, container: str, folders: str, command: str) -> str:
    """`command` is the run's own command line with --prune added: the same tags, date and options."""
    held = _count(len(files), "file")
    return (
        f"folio: {held} of {container} came from {folders} and {'is' if len(files) == 1 else 'are'} no longer there: "
        f"{', '.join(files)}. Remove {'it' if len(files) == 1 else 'them'} with: {command}"
    )


def name_clash(name: str, *, new: str, old: str, container: str) -> str:
    return (
        f"{name}: {new} has the name of {old}, already in {container}; rename one, index it into another container, "
        f"or take the first out with: folio remove {name} --container {container}"
    )


def file_progress(done: int, total: int, name: str, state: str, *, pages: int, passages: int) -> str:
    """A log line per file when indexing without a terminal: `folio: [2/5] travel.pdf: indexed, 2 pages, 9 passages`."""
    what = {"indexed": "indexed", "unchanged": "unchanged", "failed": "not indexed", "skipped": "skipped"}[state]
    if state == "indexed":
        what += f", {_count(pages, 'page')}" if pages else ""
        what += f", {_count(passages, 'passage')}"
    return f"folio: [{done}/{total}] {name}: {what}"


def index_progress(done: int, total: int, *, pages: int, passages: int) -> str:
    """The counts on the terminal's progress bar: `3/5 files, 120 pages, 640 passages`."""
    return f"{done}/{total} files, {_count(pages, 'page')}, {_count(passages, 'passage')}"


NOTHING_INDEXED = "No documents are indexed yet. Add some with: folio index PATH --container NAME"


def removed_file(file: str, passages: int) -> str:
    return f"removed {file} ({_count(passages, 'passage')})"


def not_in_container(names: list[str], container: str) -> str:
    return f"folio: not in {container}: {', '.join(names)}. See the names with: folio list --container {container}"


# --- search-only answers and the terminal ----------------------------------------------------------------------------
CLOSEST_PASSAGE = "The closest passage, which does not answer the question:"
CHAT_CANCELLED = "(answer cancelled)"


def searching_with_context(query: str) -> str:
    """The search a follow-up made, words carried from the question before included."""
    return f"searching: {query} — a follow-up, so words of the question before are carried over"


def bad_cli_tag(text: str) -> str:
    return f"--tag {text!r} is not a tag: write key=value or key:value (for example --tag department=finance)."


def _first_few(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def golden_not_indexed(files: list[str], scope: str, *, named: bool) -> str:
    fix = (
        "Index them there, or name the container that holds them."
        if named
        else (
            "Name the container that holds them with --container, for example --container benefits after "
            "`folio index ../shared/corpus --container benefits`."
        )
    )
    cited = _first_few(files)
    return f"None of the documents this golden file cites ({cited}) is indexed in {scope}, so every score would be 0. {fix}"


def golden_partly_indexed(missing: list[str], scope: str) -> str:
    cited = _first_few(missing)
    return f"warning: {len(missing)} document(s) the golden file cites are not indexed in {scope}: {cited}."


# --- Documents' second pass: lock files, pictures, OCR that reads garbage, protected and empty files -----------------
def skipped_noise(name: str) -> str:
    return f"{name} (a lock or thumbnail file an editor leaves beside a document, not a document)"


def picture_without_ocr(name: str) -> str:
    """A picture met with OCR turned off (`--ocr off`)."""
    return f"{name} (a picture: Folio reads pictures with OCR, which --ocr off turns off)"


def password_protected(name: str) -> str:
    return (
        f"{name}: protected by a password, so Folio cannot read it; save a copy without the password "
        "(File > Info > Protect, or Save As > Tools > General options) and index that"
    )


def empty_document(name: str) -> str:
    return f"{name}: the document is empty (no text and no pictures); nothing to index"


def illegible_pages(name: str, pages: list[int]) -> str:
    """OCR'd pages whose text reads as garbage: reported and left out of the index."""
    shown = ", ".join(map(str, pages[:10])) + (f" and {len(pages) - 10} more" if len(pages) > 10 else "")
    return (
        f"{name}: OCR could not read {_count(len(pages), 'page')} ({shown}): its text came out as garbage "
        "(mirrored, blurred, handwritten or an unusual script?); left out of the index - scan it again or "
        "set FOLIO_OCR_LANGUAGES"
    )


def illegible_document(name: str) -> str:
    return (
        f"{name}: OCR could not read it: its text came out as garbage (mirrored, blurred, handwritten or an "
        "unusual script?); scan it again or set FOLIO_OCR_LANGUAGES"
    )


# Odd files during indexing: a reader's failure, and mail attachments under the name rules of files
def reader_failed(name: str, error: Exception) -> str:
    detail = " ".join(str(error).split())[:200]
    return (
        f"{name}: could not be read ({type(error).__name__}{': ' + detail if detail else ''}); the file may be "
        "damaged: open it and save it again, or leave it out"
    )


def attachment_renamed(mail: str, attachment: str, stored: str, taken: str) -> str:
    return f"{mail}: attachment {attachment} indexed as {stored}: {taken} is another document"


def replaces_attachment(name: str, *, attachment: str, mail: str) -> str:
    return (
        f"{name}: replaces the attachment {attachment} of {mail} that had its name; the attachment is indexed under "
        f"another name when {mail} changes"
    )


__all__ = [
    "CHAT_CANCELLED",
    "CLOSEST_PASSAGE",
    "NOTHING_INDEXED",
    "NOT_TEXT",
    "SHOWN_SKIPPED",
    "UNSCOPED_SEARCH",
    "attachment_of",
    "attachment_renamed",
    "bad_cli_tag",
    "bad_container",
    "conversion_failed",
    "conversion_timeout",
    "data_folder_created",
    "document_removed",
    "empty_container",
    "empty_document",
    "file_progress",
    "file_too_long",
    "golden_not_indexed",
    "golden_partly_indexed",
    "gone_from_folder",
    "illegible_document",
    "illegible_pages",
    "index_progress",
    "index_summary",
    "name_clash",
    "needs_converter",
    "no_match",
    "no_text_after_ocr",
    "not_in_container",
    "ocr_failed",
    "pages_without_text",
    "password_protected",
    "pdf_warnings",
    "picture_without_ocr",
    "pruned",
    "read_as",
    "read_by_ocr",
    "reader_failed",
    "removed_file",
    "replaces_attachment",
    "searching_with_context",
    "skipped_link",
    "skipped_noise",
    "skipped_type",
    "skipped_unreadable",
    "unknown_container",
    "unpacks_too_large",
]
