"""What a person reads wherever Folio answers (Slack, an agent over MCP, a viewer page): answers, failures, notices."""

from __future__ import annotations

from bot.messages.words import _count, one_line

# --- answers ---------------------------------------------------------------------------------------------------------
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

# --- failures --------------------------------------------------------------------------------------------------------
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
    return (
        f"Folio does not trust the TLS certificate of the Redis at REDIS_URL ({detail}). Set REDIS_TLS_CA_FILE "
        "to the CA file that signed it, and use the host name the certificate names in REDIS_URL."
    )


def redis_cluster_down(detail: str) -> str:
    """The cluster answers, and cannot serve a key now (a node is down, slots are not covered)."""
    return (
        f"The Redis Cluster cannot serve Folio's keys right now ({detail}). Check that every node of the cluster "
        "runs and that all 16384 slots are covered (CLUSTER INFO: cluster_state:ok)."
    )


def redis_cluster_refused(detail: str) -> str:
    """redis-py's cluster client refused (a bad REDIS_URL for a cluster: a db other than 0, a unix socket)."""
    return f"REDIS_CLUSTER=true and REDIS_URL cannot be used for a cluster ({detail}). Use redis://HOST:6379 (db 0)."


def redis_permission_refused(detail: str) -> str:
    """An ACL user that may not run a command Folio needs (NOPERM)."""
    return (
        f"Redis refused a command Folio needs ({detail}). Give REDIS_URL's user Folio's keys and commands "
        "(ACL: ~folio:* ~{folio:intake}* +@all -@dangerous), or use another user."
    )


TURN_GAVE_UP = (
    "I could not finish answering this after several tries. Please ask again; if it keeps failing, tell an admin."
)
LEASE_LOST = "This answer was interrupted (I lost hold of the thread for a moment). I am starting it again."
THREAD_BUSY = "This thread is still busy with earlier questions. Please ask again in a minute."

# --- scopes and filters ----------------------------------------------------------------------------------------------
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


# --- the agent turn (progress lines, notices) ------------------------------------------------------------------------
EMPTY_QUESTION = "Ask a question in words, for example: What is the notice period for resignations?"
PROGRESS_REWRITE = "Rephrasing the question"
PROGRESS_CALCULATE = "Calculating"
PROGRESS_WRITE = "Writing the answer"
CAP_HIT = "I reached my step limit for one question, so this answer uses what I found so far."


STEP_SEARCH_FAILED = "Search failed"


def progress_search(query: str) -> str:
    """`Searching: payment terms Acme`, on one line and bounded, whatever the model searched for."""
    return f"Searching: {one_line(query, 80)}"


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


# --- budgets and rate caps (bot.turns.budget) ------------------------------------------------------------------------
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


# --- Files shared in a thread ----------------------------------------------------------------------------------------
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
    return (
        f"Did not read {name}: {said}, and a file shared in a thread may be {limit / mb:.3g} MB "
        "(FOLIO_THREAD_FILE_MB). Share the pages that matter, or ask an admin to index it."
    )


def thread_files_full(name: str, limit: int) -> str:
    return (
        f"Did not read {name}: this thread has {limit} files already (FOLIO_THREAD_FILES). Start a new "
        "thread to ask about more."
    )


def thread_file_outsider(name: str) -> str:
    return f"Did not read {name}: it was shared by a person of another organisation, and Folio reads only its own."


def thread_file_gone(name: str, why: str) -> str:
    return (
        f"Could not fetch {name} from Slack ({why}). Share it again, or check that Folio may read files (files:read)."
    )


THREAD_FILES_ONLY = (
    "Ask me about {names} in this thread: I will answer from them, and from the documents this channel can see."
)


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


__all__ = [
    "BUTTON_ANSWER_AGAIN",
    "CAP_HIT",
    "DELETED_TITLE",
    "DM_NOT_CONNECTED",
    "EARLIER_ANSWERS_FORGOTTEN",
    "EMPTY_QUERY",
    "EMPTY_QUESTION",
    "HISTORY_EXPIRED",
    "HISTORY_RESTORED",
    "LEASE_LOST",
    "MODEL_DOWN",
    "NOT_IN_DOCUMENTS",
    "NO_MODEL",
    "PROGRESS_CALCULATE",
    "PROGRESS_REWRITE",
    "PROGRESS_WRITE",
    "REDIS_CLUSTER_NEEDS_URL",
    "REDIS_CROSSSLOT",
    "REDIS_HAS_NO_PASSWORD",
    "REDIS_IS_A_CLUSTER",
    "REDIS_IS_NOT_A_CLUSTER",
    "REDIS_NEEDS_PASSWORD",
    "REDIS_PASSWORD_REFUSED",
    "REDIS_TLS_UNVERIFIED",
    "REDIS_URL_FORMS",
    "SEARCH_DOWN",
    "STEP_SEARCH_FAILED",
    "STORE_DOWN",
    "STORE_UNREACHABLE",
    "THREAD_BUSY",
    "THREAD_FILES_ONLY",
    "TURN_GAVE_UP",
    "UNEXPECTED",
    "WATCH_NOTE_HEAD",
    "WATCH_NOTHING_TO_ASK",
    "WATCH_NO_RUNS",
    "WATCH_POST_NEEDS_SLACK",
    "WATCH_SOURCE_GONE",
    "bad_tag_key",
    "bad_top",
    "channel_not_connected",
    "chat_welcome",
    "filter_outside_channel",
    "over_budget",
    "progress_read",
    "progress_search",
    "question_too_long",
    "redis_cluster_down",
    "redis_cluster_refused",
    "redis_permission_refused",
    "redis_tls_refused",
    "step_sources",
    "thread_file_gone",
    "thread_file_outsider",
    "thread_file_read",
    "thread_file_too_big",
    "thread_file_too_long",
    "thread_file_unreadable",
    "thread_files_full",
    "too_many_questions",
    "unknown_filter",
    "unverified",
    "updated_ago",
    "watch_changed",
    "watch_pending",
    "watch_posted_now",
    "watch_removed",
    "watch_run",
]
