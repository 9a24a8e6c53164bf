"""Every sentence Folio says to a person, in one place so tone and wording stay consistent.

Plain strings and small pure functions that fill them in. Slack mrkdwn is allowed; keep each to one or two lines
and end with what the person can do next.
"""

from __future__ import annotations

# --- answers -----------------------------------------------------------------------------------------------------
NO_MODEL = "No model is set up, so these are the passages that match best, quoted as they stand."
MODEL_DOWN = "The model is not answering right now, so these are the passages that match best, quoted as they stand."
NOT_IN_DOCUMENTS = "The documents I can search do not answer this."
HISTORY_RESTORED = "The earlier context of this thread had expired; I restored it from the saved history."
HISTORY_EXPIRED = "The history of this thread has expired, so I answered it as a new question."

# --- failures ----------------------------------------------------------------------------------------------------
SEARCH_DOWN = "Search is not available right now. Please try again in a few minutes; if it keeps failing, tell an admin."
STORE_DOWN = "I could not reach my conversation store. Please try again in a minute; if it keeps failing, tell an admin."
UNEXPECTED = "Something went wrong on my side and I could not answer. Please try again; if it keeps failing, tell an admin."

STORE_UNREACHABLE = "Redis is not reachable; conversations cannot be read or saved. Check REDIS_URL, or FOLIO_DATA_DIR for the embedded Redis."
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
    return f"The container {container!r} holds no documents yet. Add some with: folio index PATH --container {container}"


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
    return f"Searching: {query}"


def step_sources(new: int, repeated: int) -> str:
    """What a finished search found: "3 sources", "no new sources (2 already shown)"."""
    found = f"{new} source{'s' if new != 1 else ''}" if new else "no new sources"
    return found + (f" ({repeated} already shown)" if repeated else "")


def unverified(labels: list[int]) -> str:
    refs = ", ".join(f"[{label}]" for label in labels)
    return f"I could not confirm that the source supports the sentences cited with {refs}; check those pages."


def chat_welcome(scope: str, *, model_configured: bool) -> str:
    how = "" if model_configured else " No model is set up, so answers quote the best passages."
    return f"Ask about the documents in {scope}.{how} Type exit or press Ctrl-D to end."


# --- document links (issue 4): plain-text pages a browser shows instead of the PDF -----------------------------------
LINK_REFUSED = "This document link is not valid or has expired. Ask Folio the question again for a fresh link."
DOCUMENT_GONE = (
    "Folio no longer holds this document (it was removed, or indexed again under another name). "
    "Ask Folio the question again, or ask an admin to index the document again."
)

# --- Slack (issue 5) ---------------------------------------------------------------------------------------------
SLACK_NOT_CONFIGURED = "Slack is not configured (SLACK_BOT_TOKEN is unset), so Folio chats here in the terminal instead."
WORKING = "Reading your question…"
MODEL_UNAVAILABLE = "The model is not answering right now. Please try again in a few minutes; if it keeps failing, tell an admin."
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
CONFIRM_DELETE_TEXT = "This deletes my messages in this thread and everything I stored about it. It cannot be undone."
THINKING_HARDER = "Thinking harder about this one…"
CONVERSATION_GONE = "This conversation has expired or was deleted. Ask again with a mention or `/ask`."
DELETED = "I deleted this conversation: my messages in the thread and everything I stored about it."
FEEDBACK_THANKS = "Thanks for the feedback; it is saved with this answer."
SCOPE_CHANGED = "This channel now searches other documents than when this thread began. Mention me in a new message to ask again."


def asked(user: str, question: str) -> str:
    """The public restatement of an `/ask` question (mrkdwn; `question` already escaped)."""
    return f"<@{user}> asked: {question}"


def applied_filters(container: str, tags: list[str]) -> str:
    shown = ", ".join(f"`{tag}`" for tag in tags) if tags else "none"
    return f"Searched *{container}* · Applied filters: {shown}"


def delete_not_allowed(starter: str | None) -> str:
    who = f"<@{starter}>, who started it," if starter else "the person who started it"
    return f"Only {who} or a workspace admin can delete this conversation."


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
        lines.append("This channel is not connected to any documents yet; an admin can connect it in the channel policy.")
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


# --- the model service's refusals (issue 12) -----------------------------------------------------------------------
MODEL_MISCONFIGURED = (
    "Folio is misconfigured: the model service refused its settings, so I cannot answer. "
    "Please tell an admin; Folio's log names the setting to fix."
)
MODEL_QUOTA = "The model service says Folio's quota is used up, so I cannot answer. Please tell an admin to check the plan and billing."
CONTENT_FILTERED = "The model service's content filter blocked this question or its answer. Rephrase the question and ask again."
CONTEXT_TOO_LONG = "This thread has grown too long for the model. Mention me in a new message to start afresh."
HISTORY_TRIMMED = "This thread had grown too long for the model, so I left out its oldest questions."
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
