"""Every sentence Folio says to a person, in one place so tone and wording stay consistent.

Plain strings and small pure functions that fill them in. Slack mrkdwn is allowed; keep each to one or two lines
and end with what the person can do next.
"""

from __future__ import annotations

# --- answers -----------------------------------------------------------------------------------------------------
NO_MODEL = "No model is set up, so I quote the documents instead of writing an answer."
MODEL_DOWN = "The model is not answering right now, so I quote the documents instead of writing an answer."
NOT_IN_DOCUMENTS = "The documents I can search do not answer this."
DELETED_TITLE = "Deleted conversation"  # an assistant thread's title once its conversation is deleted
EARLIER_ANSWERS_FORGOTTEN = (
    "Earlier answers in this thread relied on a document that has since been removed or that this thread may no "
    "longer search, so I set them aside and did not use them for this answer."
)
HISTORY_RESTORED = "The earlier context of this thread had expired; I restored it from the saved history."
HISTORY_EXPIRED = "The history of this thread has expired, so I answered it as a new question."

# --- failures ----------------------------------------------------------------------------------------------------
SEARCH_DOWN = (
    "Search is not available right now. Please try again in a few minutes; if it keeps failing, tell an admin."
)
STORE_DOWN = (
    "I could not reach my conversation store. Please try again in a minute; if it keeps failing, tell an admin."
)
UNEXPECTED = (
    "Something went wrong on my side and I could not answer. Please try again; if it keeps failing, tell an admin."
)

STORE_UNREACHABLE = "Redis is not reachable; conversations cannot be read or saved. Check REDIS_URL, or FOLIO_DATA_DIR for the embedded Redis."
REDIS_URL_FORMS = "redis://:PASSWORD@HOST:6379/0 (or redis://USER:PASSWORD@HOST:6379/0 for an ACL user)"
REDIS_NEEDS_PASSWORD = f"Redis asks for a password and REDIS_URL has none. Put it in the URL: {REDIS_URL_FORMS}."
REDIS_PASSWORD_REFUSED = (
    "Redis refused the password (or user) in REDIS_URL. Set REDIS_URL to redis://:PASSWORD@HOST:6379/0 with the "
    "server's password (its requirepass), or redis://USER:PASSWORD@HOST:6379/0 for an ACL user."
)
REDIS_HAS_NO_PASSWORD = (
    "REDIS_URL holds a password but this Redis asks for none. Remove it from the URL (redis://HOST:6379/0), "
    "or set requirepass on the server."
)


REDIS_IS_A_CLUSTER = (
    "REDIS_URL is a node of a Redis Cluster (it answered MOVED: the key lives on another node). Set "
    "REDIS_CLUSTER=true, so that Folio uses a cluster client."
)
REDIS_CROSSSLOT = (
    "Redis refused keys of several hash slots in one command (CROSSSLOT): REDIS_URL is a Redis Cluster. Set "
    "REDIS_CLUSTER=true; if it is set already, this is a bug in Folio: please report it."
)
REDIS_IS_NOT_A_CLUSTER = (
    "REDIS_CLUSTER=true, but the Redis at REDIS_URL is not a cluster (cluster mode is not enabled on it). Set "
    "REDIS_CLUSTER=false, or point REDIS_URL at a node of the cluster."
)
REDIS_TLS_UNVERIFIED = (
    "REDIS_TLS_VERIFY=false: Folio accepts any certificate from Redis, so anyone between Folio and Redis can read and "
    "change conversations. Use it only to test; set REDIS_TLS_CA_FILE to the CA that signed the server's certificate."
)
REDIS_CLUSTER_NEEDS_URL = (
    "REDIS_CLUSTER=true needs REDIS_URL: the embedded Redis is a single server. Set REDIS_URL to a node of the "
    "cluster (redis://HOST:6379 or rediss://HOST:6380), or REDIS_CLUSTER=false."
)


def redis_tls_refused(detail: str) -> str:
    """Folio did not accept the certificate of a rediss:// Redis."""
    return (f"Folio does not trust the TLS certificate of the Redis at REDIS_URL ({detail}). Set REDIS_TLS_CA_FILE "
            "to the CA file that signed it, and use the host name the certificate names in REDIS_URL.")  # fmt: skip


def redis_cluster_down(detail: str) -> str:
    """The cluster answers, and cannot serve a key now (a node is down, slots are not covered)."""
    return (f"The Redis Cluster cannot serve Folio's keys right now ({detail}). Check that every node of the cluster "
            "runs and that all 16384 slots are covered (CLUSTER INFO: cluster_state:ok).")  # fmt: skip


def redis_cluster_refused(detail: str) -> str:
    """redis-py's cluster client refused (a bad REDIS_URL for a cluster: a db other than 0, a unix socket)."""
    return f"REDIS_CLUSTER=true and REDIS_URL cannot be used for a cluster ({detail}). Use redis://HOST:6379 (db 0)."


def redis_permission_refused(detail: str) -> str:
    """An ACL user that may not run a command Folio needs (NOPERM)."""
    return (f"Redis refused a command Folio needs ({detail}). Give REDIS_URL's user Folio's keys and commands "
            "(ACL: ~folio:* ~{folio:intake}* +@all -@dangerous), or use another user.")  # fmt: skip


TURN_GAVE_UP = (
    "I could not finish answering this after several tries. Please ask again; if it keeps failing, tell an admin."
)
LEASE_LOST = "This answer was interrupted (I lost hold of the thread for a moment). I am starting it again."
THREAD_BUSY = "This thread is still busy with earlier questions. Please ask again in a minute."

# --- scopes and filters ------------------------------------------------------------------------------------------
DM_NOT_CONNECTED = (
    "Direct messages are not connected to any documents. Ask in a channel that is, or ask an admin to add "
    "a `dm:` entry to the channel policy file."
)
EMPTY_QUERY = "The search query is empty: type a few words about what you are looking for."


def channel_not_connected(channel_id: str) -> str:
    return (
        f"This channel is not connected to any documents. An admin can connect it by adding {channel_id} "
        "with a container under `channels:` in the channel policy file."
    )


def unknown_filter(key: str, allowed_keys: tuple[str, ...]) -> str:
    allowed = ", ".join(allowed_keys) or "none"
    return f"`{key}` is not a filter here. Filters this channel allows: {allowed}."


def filter_outside_channel(tag: str, limits: list[str]) -> str:
    return f"This channel only searches {', '.join(limits)}, so `{tag}` cannot be used here. Leave the filter out to search them."


def bad_tag_key(key: str) -> str:
    return f"The tag key {key!r} is not valid: use lower-case letters, digits and _ (for example year:2025)."


def bad_top(top: int) -> str:
    return f"top must be between 1 and 100 (got {top}): ask for fewer results."


# --- search and indexing (terminal) -------------------------------------------------------------------------------


def empty_container(container: str) -> str:
    return (
        f"The container {container!r} holds no documents yet. Add some with: folio index PATH --container {container}"
    )


def no_match(scope: str) -> str:
    return f"Nothing in {scope} matches closely enough. Try other words, or fewer tags."


# --- the agent turn (progress lines, notices) -----------------------------------------------------------------------
EMPTY_QUESTION = "Ask a question in words, for example: What is the notice period for resignations?"
PROGRESS_REWRITE = "Rephrasing the question"
PROGRESS_CALCULATE = "Calculating"
PROGRESS_WRITE = "Writing the answer"
CAP_HIT = "I reached my step limit for one question, so this answer uses what I found so far."


STEP_SEARCH_FAILED = "Search failed"


def progress_search(query: str) -> str:
    """`Searching: payment terms Acme`, on one line and bounded, whatever the model searched for."""
    return f"Searching: {one_line(query, 80)}"


def one_line(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def question_too_long(length: int, *, limit: int) -> str:
    return (
        f"Your question is {length:,} characters long; I take questions of up to {limit:,}. "
        "Ask it more briefly, or in parts."
    )


def progress_read(title: str) -> str:
    """`Reading: contract.pdf`, a file shared in the thread read whole."""
    return f"Reading: {one_line(title, 80)}"


def step_sources(new: int, repeated: int) -> str:
    """What a finished search found: "3 sources", "no new sources (2 already shown)"."""
    found = f"{new} source{'s' if new != 1 else ''}" if new else "no new sources"
    return found + (f" ({repeated} already shown)" if repeated else "")


def unverified(labels: list[int]) -> str:
    refs = ", ".join(f"[{label}]" for label in labels)
    return f"I could not confirm that the source supports the sentences cited with {refs}; check those pages."


def chat_welcome(scope: str, *, model_configured: bool) -> str:
    how = "" if model_configured else " No model is set up, so answers quote the best passages."
    return f"Ask about the documents in {scope}.{how} Ctrl-C cancels an answer; exit or Ctrl-D ends the chat."


# --- document links (issue 4): plain-text pages a browser shows instead of the PDF -----------------------------------
LINK_REFUSED = "This document link is not valid or has expired. Ask Folio the question again for a fresh link."
DOCUMENT_GONE = (
    "Folio no longer holds this document (it was removed, or indexed again under another name). "
    "Ask Folio the question again, or ask an admin to index the document again."
)

# --- Slack (issue 5) ---------------------------------------------------------------------------------------------
SLACK_NOT_CONFIGURED = (
    "Slack is not configured (SLACK_BOT_TOKEN is unset), so Folio chats here in the terminal instead."
)
SLACK_NOT_CONFIGURED_NO_TERMINAL = (
    "SLACK_BOT_TOKEN is not set, and there is no terminal to chat in instead: set SLACK_BOT_TOKEN and "
    "SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN for Socket Mode) to serve Slack, or run `folio chat` in a terminal."
)
WORKING = "Reading your question…"
MODEL_UNAVAILABLE = (
    "The model is not answering right now. Please try again in a few minutes; if it keeps failing, tell an admin."
)
TURN_TIMED_OUT = "This took too long, so I stopped. Try a narrower question, or ask again in a minute."
SLACK_FAILED = "Slack would not show my answer. Please ask again; if it keeps failing, tell an admin."
NOT_SAVED = "I could not save this thread, so a reply here will start a new conversation. Mention me to continue."
NOT_IN_CHANNEL = "I am not a member of this channel. Invite me with `/invite @Folio`, then ask again."
ANSWER_CUT = "_The answer was too long for one Slack message and is cut here._"
SOURCES_HEADING = "*Sources*"
BUTTON_HELPFUL = "Helpful"
BUTTON_NOT_HELPFUL = "Not helpful"
BUTTON_THINK_HARDER = "Think harder"
BUTTON_DELETE = "Delete this conversation"
CONFIRM_DELETE_TITLE = "Delete this conversation?"
CONFIRM_DELETE_TEXT = (
    "This deletes my messages in this thread, the responses the model service stored for it, and my record of the "
    "conversation. It cannot be undone."
)
THINKING_HARDER = "Thinking harder about this one…"
CONVERSATION_GONE = "This conversation has expired or was deleted. Ask again with a mention or `/ask`."
FEEDBACK_THANKS = "Thanks for the feedback; it is saved with this answer."
# The 👎 form (bot.slack.feedback); Slack allows 24 characters in a modal's title and buttons
FEEDBACK_FORM_TITLE = "What was wrong?"
FEEDBACK_FORM_SEND = "Send"
FEEDBACK_FORM_CANCEL = "Cancel"
FEEDBACK_FORM_REASON = "The answer was"
FEEDBACK_FORM_COMMENT = "Anything else? (optional)"
FEEDBACK_REASONS = {
    "wrong": "Wrong", "outdated": "Outdated", "source": "Missing or wrong source", "other": "Something else",
}  # fmt: skip
SCOPE_CHANGED = (
    "What I may search here has changed since this thread began: this answer follows today's settings, shown below."
)
STREAM_REPLACED = "I rewrote this answer after checking its citations against the sources."


def asked(user: str, question: str) -> str:
    """The public restatement of an `/ask` question (mrkdwn; `question` already escaped)."""
    return f"<@{user}> asked: {question}"


def applied_filters(container: str, tags: list[str], basis: str | None = None) -> str:
    shown = ", ".join(f"`{tag}`" for tag in tags) if tags else "none"
    why = f" ({basis})" if basis else ""
    return f"Searched *{container}*{why} · Applied filters: {shown}"


def delete_not_allowed(starter: str | None) -> str:
    who = f"<@{starter}>, who started it," if starter else "the person who started it"
    return f"Only {who} or a workspace admin can delete this conversation."


def deleted(*, messages: int, responses: int) -> str:
    """What deleting a conversation did, and nothing more."""
    return (
        f"Deleted: {_none_or(messages, 'message')} of mine in this thread, {_none_or(responses, 'response')} stored by "
        "the model service, and my record of this conversation."
    )


def _none_or(number: int, thing: str) -> str:
    """ "no messages", "1 message", "2 messages" (in a sentence; `_count` says "0 files" in a summary)."""
    return f"{number or 'no'} {thing}{'' if number == 1 else 's'}"


def delete_incomplete(left: int) -> str:
    return (
        f"I could not delete everything yet ({left} item{'s' if left != 1 else ''} left). "
        "Click *Delete this conversation* again in a minute to finish."
    )


def ask_help(tag_keys: list[str], default_tags: list[str], container: str | None) -> str:
    """What `/ask help` and an empty `/ask` say: the syntax and the filters this channel allows."""
    lines = [
        "*Ask Folio about your documents:* `/ask [key:value ...] [--thorough] your question`",
        "• `/ask What is the notice period?`",
        "• `/ask year:2025 --thorough How did the travel policy change?`",
        "Filters narrow the search; `--thorough` takes longer and thinks harder. "
        "You can also mention me in a channel, or send me a direct message.",
    ]
    if container is None:
        lines.append(
            "This channel is not connected to any documents yet; an admin can connect it in the channel policy."
        )
        return "\n".join(lines)
    keys = ", ".join(f"`{key}`" for key in tag_keys) or "none"
    lines.append(f"Here I search *{container}*. Filters this channel allows: {keys}.")
    if default_tags:
        lines.append("Always applied here: " + ", ".join(f"`{tag}`" for tag in default_tags) + ".")
    return "\n".join(lines)


def bad_filter_value(token: str) -> str:
    return (
        f"`{token}` is not a filter I can use: values are letters, digits and `. - _ / + @`, with no spaces. "
        "Fix the filter and ask again."
    )


# --- access per person and the assistant (issue 13, issue 11 item 3) ------------------------------------------------
NO_ACCESS = (
    "You have no documents to search in direct messages. An admin can give you some under `access:` in the "
    "channel policy file; meanwhile, ask in a channel that is connected."
)
ACCESS_UNKNOWN = (
    "I could not check your Slack user groups just now, so I cannot tell which documents you may search. "
    "Please try again in a few minutes; if it keeps failing, tell an admin."
)
# Slack Connect (bot.turns.boundary)
SHARED_CHANNEL_REFUSED = "I don't answer in channels shared with people outside the organisation."
OUTSIDER_REFUSED = "I only answer people of this organisation."
SHARING_UNKNOWN = (
    "I could not check with Slack whether this conversation is shared outside the organisation, so I have not "
    "answered. Please try again in a few minutes."
)
BASIS_NAMED = "what the policy names for you"
# "Search what only I can see" (bot.slack.private): shown only to the person, saying nothing of what else there is
PRIVATE_OFFER = "You may read more than this channel searches. I can answer this privately, in our direct messages."
BUTTON_PRIVATE = "Search what only I can see"
BASIS_PRIVATE = "this channel's documents and what you may read"


def private_root(permalink: str, question: str) -> str:
    """The first message of a private answer's DM thread: where the question was asked, and the question."""
    return f"Answering privately your question from <{permalink}|this thread>:\n> {question}"


BASIS_ACCESS = "what you may read"
BASIS_DM = "the direct-message documents"
PROMPTS_TITLE = "Try asking:"


def basis_viewed(channel: str) -> str:
    """Why an assistant thread searched a channel's documents (mrkdwn, for the answer's footer)."""
    return f"as in <#{channel}>, the channel you are viewing"


def default_prompt(container: str) -> tuple[str, str]:
    """The suggested prompt (title, message) for a container the policy gives none for."""
    return f"About {container}", f"What do the {container} documents cover?"


def assistant_greeting(containers: list[str] | None) -> str:
    """The first message of an assistant thread (mrkdwn; container names already escaped; None: not known yet)."""
    if containers is not None and not containers:
        return "Hi! " + NO_ACCESS
    where = ", ".join(f"*{name}*" for name in containers) if containers else "your documents"
    return f"Hi! I search {where} for you, and every answer links to its page. What would you like to know?"


def access_lines(containers: list[str], matched: list[str]) -> list[str]:
    """What `/ask access` says about direct messages: the containers and the rules that gave them."""
    if not containers:
        return [NO_ACCESS]
    rules = "; ".join(matched)
    return [f"In a direct message with me you can search *{', '.join(containers)}* ({rules})."]


def channel_access_line(channel: str, container: str | None, tags: list[str]) -> str:
    """What `/ask access` says about the channel it was typed in."""
    if container is None:
        return f"<#{channel}> is not connected to any documents."
    always = f", always with {', '.join(f'`{tag}`' for tag in tags)}" if tags else ""
    return f"In <#{channel}> I search *{container}*{always}."


def not_a_user_id(text: str) -> str:
    """`folio access` was given something other than a Slack user ID (a name, a handle, a mention)."""
    return (
        f"{text!r} is not a Slack user ID (it looks like U0123ABCD: in Slack, open the person's profile, "
        "then ... > Copy member ID)."
    )


def unknown_groups(handles: list[str]) -> str:
    """The start-up report of policy group handles Slack does not know (their rules give nobody anything)."""
    return (
        f"channel policy: Slack knows no user group with the handle {', '.join(handles)}; "
        "those access rules give nobody anything. Fix the handle or use the group's ID (S0123ABCD)."
    )


# --- the index (issue 9: scope, lifecycle, hygiene; issue 14: containers) -------------------------------------------
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


def read_as(name: str, encoding: str) -> str:
    return f"{name}: not UTF-8, read as {encoding}"


def pdf_warnings(name: str, count: int, first: str) -> str:
    problems = f"{count} problem{'s' if count != 1 else ''}"
    return f"{name}: the PDF reader repaired {problems} (first: {first[:120]}); check that its passages read right"


# --- converting and OCR (issue 20) ----------------------------------------------------------------------------------
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


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


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


# --- search-only answers and the terminal (issue 14) ---------------------------------------------------------------
CLOSEST_PASSAGE = "The closest passage, which does not answer the question:"
CHAT_CANCELLED = "(answer cancelled)"


def searching_with_context(query: str) -> str:
    """The search a follow-up made, words carried from the question before included."""
    return f"searching: {query} — a follow-up, so words of the question before are carried over"


def dated(day: str) -> str:
    return f"dated {day}"


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


# --- the model service's refusals (issue 12) -----------------------------------------------------------------------
MODEL_MISCONFIGURED = (
    "Folio is misconfigured: the model service refused its settings, so I cannot answer. "
    "Please tell an admin; Folio's log names the setting to fix."
)
MODEL_QUOTA = "The model service says Folio's quota is used up, so I cannot answer. Please tell an admin to check the plan and billing."
CONTENT_FILTERED = (
    "The model service's content filter blocked this question or its answer. Rephrase the question and ask again."
)
CONTEXT_TOO_LONG = "This thread has grown too long for the model. Mention me in a new message to start afresh."
HISTORY_TRIMMED = "This thread had grown too long for the model, so I left out its oldest questions."
MODEL_RATE_LIMITED = (
    "The model service is limiting how fast I may ask it right now. Please try again in a minute; if it keeps "
    "happening, tell an admin."
)
MODEL_REFUSED = "The model service refused this request. Please try again; if it keeps failing, tell an admin."


# --- start-up and operations (issue 12): lines an operator reads on stderr -------------------------------------------
EMBEDDED_REDIS_GAVE_UP = (
    "The embedded Redis kept dying, so Folio stops here for its supervisor (Docker, systemd) to start it afresh. "
    "Its last log lines are above; set REDIS_URL to use a Redis server instead."
)


def slack_token_refused(variable: str, error: str | None) -> str:
    """`SLACK_BOT_TOKEN` / `SLACK_APP_TOKEN` refused by Slack at start-up, with where to get a good one."""
    where = (
        "Basic Information > App-Level Tokens (an xapp- token with connections:write)"
        if variable == "SLACK_APP_TOKEN"
        else "OAuth & Permissions > Bot User OAuth Token (xoxb-...)"
    )
    return f"Slack refused {variable} ({error or 'no reason given'}). Copy it again from your app's {where} into .env."


SLACK_NOT_ASKED_YET = "not answered yet (Folio is starting)"
STOPPING_NOT_READY = "stopping: this process is shutting down and takes no new events"


def unreachable(service: str, *, url: str, setting: str, host: str, cause: str, detail: str) -> tuple[str, str]:
    """A service Folio could not reach, by the real cause (dns, refused, tls, timeout, other), and what to check."""
    why, fix = {
        "dns": (f"the name {host} does not resolve ({detail})",
                (f"Check the DNS and outbound network of this machine or container; {setting} is only wrong if you "
                 "changed it")),
        "refused": (f"{host} refused the connection",
                    f"Check {setting}, and any proxy (HTTPS_PROXY) or firewall between Folio and {service}"),
        "tls": (f"the TLS handshake with {host} failed ({detail})",
                ("Check the system's CA certificates (SSL_CERT_FILE) and any proxy that intercepts TLS; an http:// "
                 f"server behind an https:// {setting} fails this way too")),
        "timeout": (f"{host} did not answer in time",
                    "Check the outbound network: a firewall or proxy may be dropping the connection"),
    }.get(cause, (detail, f"Check {setting} and the outbound network"))  # fmt: skip
    return f"{service} cannot be reached at {setting} ({url}): {why}", fix


# --- budgets and rate caps (bot.turns.budget) ---------------------------------------------------------------------
def over_budget(whose: str, limit: int, *, resets_in: float) -> str:
    """`whose` is "user", "channel" or "workspace"; the budget resets at midnight UTC, `resets_in` seconds away."""
    owner = {"user": "You have", "channel": "This channel has", "workspace": "This workspace has"}[whose]
    return (
        f"{owner} used today's Folio budget of {limit:,} tokens, so I will not start on this question. "
        f"The budget resets at midnight UTC (in {_duration(resets_in)}); an admin can raise it."
    )


def too_many_questions(per_minute: int, *, retry_in: float) -> str:
    a_minute = "one question a minute" if per_minute == 1 else f"{per_minute} questions a minute"
    return (
        f"You are asking faster than {a_minute}, so I will not start on this one. Ask again in {_duration(retry_in)}."
    )


def _duration(seconds: float) -> str:
    seconds = max(1, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


# --- "Why this answer?" (bot.slack.why, `folio trace`) -------------------------------------------------------------
WHY_TITLE = "Why this answer?"
WHY_ADMINS_ONLY = "Only Folio's admins can see why an answer said what it said (`admins:` in channels.yaml)."
WHY_NO_TRACE = "There is no trace of this answer: traces are kept for 30 days, and only while FOLIO_TRACES is on."
WHY_NO_TRACE_HERE = "No trace is kept of that thread in this workspace: traces last 30 days, with FOLIO_TRACES on."
WHY_NOT_A_LINK = "This is neither a Slack message link nor a thread ts such as 1700000000.123456."
WHY_LINK_LABEL = "The answer's link, or its thread's ts"
WHY_LINK_HINT = "In Slack: the answer's ⋮ menu > Copy link. A thread's ts such as 1700000000.123456 works too."
WHY_LINK_SUBMIT = "Show"
WHY_LINK_PLACEHOLDER = "https://….slack.com/archives/C…/p…"
WHY_TURN = "*Turn {number}*"
# An admin reads a trace's question and answer only where they can read the conversation in Slack (bot.slack.why)
WHY_WORDS_HIDDEN = (
    "_Question and answer hidden: you are not in this conversation, and it is not a public channel of the "
    "workspace. Its searches, sources and citations are shown._"
)
WHY_WORDS_UNKNOWN = (
    "_Question and answer hidden: Slack could not say whether you can see this conversation (try again in a "
    "minute). Its searches, sources and citations are shown._"
)
CLOSE = "Close"
# The Home tab (bot.slack.home): published for each person; only an admin's holds "Why this answer?"
HOME_HOW_TO = (
    "*Ask Folio about your documents.* Mention @Folio in a channel it is in, send it a direct message, or use "
    "`/ask [key:value ...] question` (`/ask help` shows how). Every claim links to the page it comes from; reply in "
    "the thread to follow up."
)
HOME_WHY = (
    "*Why this answer?* See what an answer searched for, the sources it was shown with their scores, and the "
    "citations the check removed. Only you see this here: you are one of Folio's admins."
)
BUTTON_WHY_LINK = "Why this answer?"
BUTTON_WHY = "Why?"
HOME_RECENT = "*Latest answers in channels*, newest first"
HOME_NO_RECENT = "No answer in a channel has a trace yet."
HOME_TRACES_OFF = "Traces are off (FOLIO_TRACES=false): answers keep no trace to show."
HOME_QUESTION_HIDDEN = "_Question hidden: you are not in this conversation._"
HOME_QUESTION_UNKNOWN = "_Question hidden: Slack could not say whether you can see this conversation._"


def no_trace(thread_ts: str) -> str:
    return f"No trace is kept for thread {thread_ts}: traces last 30 days, and only with FOLIO_TRACES on."


def not_a_thread(text: str) -> str:
    return f"{text!r} is neither a Slack message link nor a ts such as 1700000000.123456."


def since_in_future(since: str, today: str) -> str:
    return f"--since {since} is in the future; usage is counted up to today ({today}, UTC)."


# --- Documents' second pass: lock files, pictures, OCR that reads garbage, protected and empty files ---------------
def skipped_noise(name: str) -> str:
    return f"{name} (a lock or thumbnail file an editor leaves beside a document, not a document)"


def picture_without_ocr(name: str) -> str:
    """A picture met with OCR turned off (`--ocr off`)."""
    return f"{name} (a picture: Folio reads pictures with OCR, which --ocr off turns off)"


def password_protected(name: str) -> str:
    return (f"{name}: protected by a password, so Folio cannot read it; save a copy without the password "
            "(File > Info > Protect, or Save As > Tools > General options) and index that")  # fmt: skip


def empty_document(name: str) -> str:
    return f"{name}: the document is empty (no text and no pictures); nothing to index"


def illegible_pages(name: str, pages: list[int]) -> str:
    """OCR'd pages whose text reads as garbage: reported and left out of the index."""
    shown = ", ".join(map(str, pages[:10])) + (f" and {len(pages) - 10} more" if len(pages) > 10 else "")
    return (f"{name}: OCR could not read {_count(len(pages), 'page')} ({shown}): its text came out as garbage "
            "(mirrored, blurred, handwritten or an unusual script?); left out of the index - scan it again or "
            "set FOLIO_OCR_LANGUAGES")  # fmt: skip


def illegible_document(name: str) -> str:
    return (f"{name}: OCR could not read it: its text came out as garbage (mirrored, blurred, handwritten or an "
            "unusual script?); scan it again or set FOLIO_OCR_LANGUAGES")  # fmt: skip


# --- Files shared in a thread ---------------------------------------------------------------------------------------
def thread_file_read(name: str, pages: int | None) -> str:
    """Said under the answer of the turn that read a shared file."""
    return f"Read {name}" + (f", {_count(pages, 'page')}." if pages else ".")


def thread_file_unreadable(why: str) -> str:
    """`why` is the pipeline's own line, which names the file: `contract.docx: LibreOffice could not ...`."""
    return f"Could not read {why}"


def thread_file_too_long(name: str, pages: int, limit: int) -> str:
    return (
        f"Did not keep {name}: {pages} pages, and a file shared in a thread may have {limit} (FOLIO_THREAD_FILE_PAGES)."
    )


def thread_file_too_big(name: str, size: int | None, limit: int) -> str:
    """`size` None: the download passed the limit (Slack had said it was smaller)."""
    mb = 1024 * 1024
    said = f"{size / mb:.1f} MB" if size is not None else f"over {limit / mb:.3g} MB"
    return (f"Did not read {name}: {said}, and a file shared in a thread may be {limit / mb:.3g} MB "
            "(FOLIO_THREAD_FILE_MB). Share the pages that matter, or ask an admin to index it.")  # fmt: skip


def thread_files_full(name: str, limit: int) -> str:
    return (f"Did not read {name}: this thread has {limit} files already (FOLIO_THREAD_FILES). Start a new "
            "thread to ask about more.")  # fmt: skip


def thread_file_outsider(name: str) -> str:
    return f"Did not read {name}: it was shared by a person of another organisation, and Folio reads only its own."


def thread_file_gone(name: str, why: str) -> str:
    return (
        f"Could not fetch {name} from Slack ({why}). Share it again, or check that Folio may read files (files:read)."
    )


THREAD_FILES_ONLY = (
    "Ask me about {names} in this thread: I will answer from them, and from the documents this channel can see."
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


# --- The citation viewer (bot.viewer): the page a citation link opens ------------------------------------------------
VIEWER_PASSAGE = "Cited passage"
VIEWER_ROWS = "Cited rows"
VIEWER_NOT_LOCATED = (
    "Folio could not find the cited passage on this page with confidence, so nothing is highlighted. "
    "The passage as cited is below: look for it on the page, or open the PDF and search for its words."
)
VIEWER_PARTIAL = "The passage runs on to the next page: its opening words are highlighted here."
VIEWER_NOT_LOCATED_TEXT = (
    "Folio could not find the cited passage in this document with confidence, so nothing is marked. "
    "The passage as cited is below."
)
VIEWER_ROWS_GONE = (
    "Folio no longer holds this spreadsheet's cells (it was indexed before rows were kept, or has no sheet of that "
    "name now): open the file, or ask an admin to index it again."
)
VIEWER_PAGE_UNREADABLE = "Folio cannot draw this page of its copy (the PDF is damaged): open the PDF instead."
VIEWER_PAGE_TOO_LARGE = "This page holds pictures too large for Folio to draw: open the PDF instead."
VIEWER_PREVIOUS = "Previous page"
VIEWER_NEXT = "Next page"
VIEWER_OPEN_PDF = "Open the PDF"
VIEWER_OPEN_FILE = "Open the file"
VIEWER_SKIP = "Skip to the cited passage"
VIEWER_CUT = "…"


def viewer_no_page(page: int, pages: int) -> str:
    return f"This document has no page {page}: it has {pages} page{'s' if pages != 1 else ''}. Open the PDF instead."


def viewer_page_of(page: int, pages: int) -> str:
    return f"Page {page} of {pages}"


def viewer_page_alt(name: str, page: int) -> str:
    return f"Page {page} of {name}, as printed; the cited passage is given as text above."


def viewer_age(day: str, days: int) -> str:
    """`indexed 3 days ago (2026-11-29)`: how old Folio's copy is."""
    when = "today" if days <= 0 else ("yesterday" if days == 1 else f"{days} days ago")
    return f"indexed {when} ({day})"


def viewer_rows_caption(sheet: str, rows: str) -> str:
    return f"Sheet {sheet}: {rows}, highlighted, with the header and the rows around them"


# Agents over MCP (bot.mcp): what an agent, and through it the person, reads when a tool cannot help
MCP_QUERY_TOO_LONG = "The query is longer than {limit} characters: search for the few words that matter."
MCP_TOO_MANY_TAGS = "At most {limit} tag filters at once, each key:value (for example doc_type:contract)."
MCP_NO_SUCH_DOCUMENT = (
    "{name!r} is not among the documents you may read. Use the file name exactly as search_documents gives it."
)
MCP_NO_SUCH_PAGE = "{name} has {pages} pages; ask for a page from 1 to {pages}."
MCP_NO_PAGES = "{name} has no pages to read (a table or a text file): use search_documents to find its passages."
MCP_NO_COPY = (
    "Folio keeps no copy of {name} to read pages from (FOLIO_DOCS_BASE_URL serves the files): open its link "
    "or use search_documents."
)
MCP_SLACK_NEEDED = (
    "MCP needs Slack to know who may read what: set SLACK_BOT_TOKEN (with the scopes users:read and "
    "users:read.email), then start again."
)
MCP_URL_NEEDED = (
    "FOLIO_MCP=true needs Folio's public address for agents and their sign-in: set FOLIO_PUBLIC_URL "
    "(or FOLIO_MCP_URL to the full URL of /mcp)."
)
MCP_TOKEN_NEEDED = (
    "`folio mcp` acts for one person: set FOLIO_MCP_TOKEN to a token from "
    "`folio access token create --user U0123ABCD` (run by an admin)."
)
MCP_TOKEN_REFUSED = (
    "FOLIO_MCP_TOKEN is not a valid Folio token (unknown, revoked or expired): ask an admin for a new one "
    "(`folio access token create --user YOUR_SLACK_ID`)."
)
MCP_OIDC_PARTIAL = (
    "Sign-in with an identity provider needs all of FOLIO_OIDC_ISSUER, FOLIO_OIDC_AUDIENCE and "
    "FOLIO_OIDC_JWKS_URL; {missing} not set."
)


def bad_duration(text: str) -> str:
    return f"{text!r} is not a duration: write it as a number of days or hours, e.g. 90d or 12h (at most 366d)."


MCP_TIMED_OUT = "The answer took too long and was stopped: ask a narrower question, or use search_documents."


# "Search what only I can see": a click its value does not entitle (bot.slack.private)
PRIVATE_REFUSED = (
    "This private answer is only for the person who asked the question, while they can still read its channel. "
    "Ask your own question with a mention or `/ask` to get one."
)


# Redis TLS options in REDIS_URL (bot.app.redis_client)
def redis_tls_in_url(names: list[str]) -> str:
    return (
        f"REDIS_URL sets {', '.join(names)}: Folio takes TLS (the certificate check, the CA file) only from "
        "REDIS_TLS_VERIFY and REDIS_TLS_CA_FILE, which a URL option would silently override. Remove it from "
        "REDIS_URL and set REDIS_TLS_CA_FILE (or, for tests only, REDIS_TLS_VERIFY=false) instead."
    )


# Sources (`folio sync`, `folio sources`): what an operator reads about each source.
def source_listed_empty(name: str, where: str, held: int) -> str:
    return (
        f"source {name}: {where} listed no files, though {held} were indexed from it; nothing was removed. If the "
        f"source really is empty now, remove its documents with `folio remove` (or fix `from:` in the sources file)."
    )


def source_not_fetched(why: str) -> str:
    return f"could not be fetched ({why}); tried again next run"


def source_line(*, name: str, container: str, result: str) -> str:
    return f"{name} -> {container}: {result}"


def source_counts(*, files: int, indexed: int, unchanged: int, unreadable: int, removed: int, skipped: int) -> str:
    parts = [f"{files} files", f"{indexed} indexed", f"{unchanged} unchanged", f"{unreadable} unreadable",
             f"{removed} removed"]  # fmt: skip
    return ", ".join(parts + ([f"{skipped} skipped"] if skipped else []))


def source_failed(name: str, error: str) -> str:
    return f"{name}: NOT LISTED: {error}"


SOURCE_STOPPED = "stopped before the end (removals wait for the next run)"
SOURCES_NONE = "No sources are declared: write a sources file (see docs/sources.md), or set FOLIO_SOURCES to its path."
SOURCE_NEVER_RUN = "never synced"


def source_busy(name: str) -> str:
    return f"{name}: another `folio sync` is syncing this source now; skipped this time"


def known_bad_skipped(name: str, why: str) -> str:
    return f"{name}: not read again, unchanged since it failed ({why}); --retry-failed tries it again"


def source_name_taken(document: str, *, source: str, path: str) -> str:
    return (
        f"{document} is already the name of {path} (source {source}) in this container; rename one of them, then "
        "run `folio sync --retry-failed`"
    )


def source_undeclared(name: str, files: int) -> str:
    return (
        f"source {name} is no longer in the sources file; the documents of its {files} files stay indexed: "
        f"`folio sync --forget {name}` removes them"
    )


def source_forgotten(name: str, removed: int) -> str:
    return f"{name}: forgotten, {removed} documents removed"


# Watch: a thread told that a document its answer relied on changed or went
BUTTON_ANSWER_AGAIN = "Answer again with today's documents"
WATCH_NOTE_HEAD = "A document an answer here relied on has changed since:"
WATCH_SOURCE_GONE = "A source an answer here relied on is no longer available."
WATCH_NOTHING_TO_ASK = "There is no earlier question in this thread to answer again."


def watch_changed(citation: str, place: str, day: str, now_reads: str) -> str:
    return f"• {citation} changed on {day}: {place} now reads “{now_reads}”"


def watch_removed(citation: str, day: str) -> str:
    return f"• {citation} was removed from the documents on {day}"


def watch_run(documents: int, threads: int, notes: int, posted: int, pending: int) -> str:
    return (
        f"watch: {documents} documents changed or removed, {threads} threads checked, {notes} notes found, "
        f"{posted} posted, {pending} waiting to be posted"
    )


def updated_ago(days: int) -> str:
    if days <= 0:
        return "updated today"
    return "updated yesterday" if days == 1 else f"updated {days} days ago"


WATCH_NO_RUNS = "No run has changed or removed a document yet."
WATCH_POST_NEEDS_SLACK = "SLACK_BOT_TOKEN is not set: set it (the bot token of Folio's Slack app) to post the notes"


def watch_posted_now(posted: int) -> str:
    return f"{posted} note{'s' * (posted != 1)} posted now"


def watch_pending(pending: int) -> str:
    if not pending:
        return "No note waits to be posted."
    return (
        f"{pending} note{'s' * (pending != 1)} wait{'s' * (pending == 1)} to be posted: `folio watch --post` posts them"
    )
