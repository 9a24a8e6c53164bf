"""What a person reads only in Slack: buttons, forms, the Home tab, the assistant, shared channels, traces."""

from __future__ import annotations

# --- Slack -----------------------------------------------------------------------------------------------------------
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
    "wrong": "Wrong",
    "outdated": "Outdated",
    "source": "Missing or wrong source",
    "other": "Something else",
}
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


# --- access per person and the assistant -----------------------------------------------------------------------------
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


# --- "Why this answer?" (bot.slack.why, `folio trace`) ---------------------------------------------------------------
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


# "Search what only I can see": a click its value does not entitle (bot.slack.private)
PRIVATE_REFUSED = (
    "This private answer is only for the person who asked the question, while they can still read its channel. "
    "Ask your own question with a mention or `/ask` to get one."
)


# The admins' Home tab: documents people flagged as outdated (bot.slack.home; `folio feedback --outdated`)
HOME_FLAGGED = (
    "*Documents people flagged as outdated*, most flagged first: a 👎 saying “Outdated” under an answer that cited "
    "them (last 30 days). Only you see this here: you are one of Folio's admins."
)
HOME_NO_FLAGGED = "No answer citing a document has been flagged as outdated."
HOME_FLAGGED_UNKNOWN = "_The flagged documents could not be read just now; open this tab again in a minute._"


def home_flagged(times: int, document: str, pages: str, last: str, threads: list[str], more: int, dms: int) -> str:
    """One flagged document: how often, its pages, the latest flag, and the threads (some shown, the rest counted)."""
    rest = ([f"and {more} more"] if more else []) + ([f"{dms} in direct messages"] if dms else [])
    listed = ", ".join([*threads, *rest]) or "none left to show"
    return f"*{times}×* {document}{pages} · last {last}\nthreads: {listed}"


__all__ = [
    "ACCESS_UNKNOWN",
    "ANSWER_CUT",
    "BASIS_ACCESS",
    "BASIS_DM",
    "BASIS_NAMED",
    "BASIS_PRIVATE",
    "BUTTON_DELETE",
    "BUTTON_HELPFUL",
    "BUTTON_NOT_HELPFUL",
    "BUTTON_PRIVATE",
    "BUTTON_THINK_HARDER",
    "BUTTON_WHY",
    "BUTTON_WHY_LINK",
    "CLOSE",
    "CONFIRM_DELETE_TEXT",
    "CONFIRM_DELETE_TITLE",
    "CONVERSATION_GONE",
    "FEEDBACK_FORM_CANCEL",
    "FEEDBACK_FORM_COMMENT",
    "FEEDBACK_FORM_REASON",
    "FEEDBACK_FORM_SEND",
    "FEEDBACK_FORM_TITLE",
    "FEEDBACK_REASONS",
    "FEEDBACK_THANKS",
    "HOME_HOW_TO",
    "HOME_NO_RECENT",
    "HOME_QUESTION_HIDDEN",
    "HOME_QUESTION_UNKNOWN",
    "HOME_RECENT",
    "HOME_TRACES_OFF",
    "HOME_WHY",
    "MODEL_UNAVAILABLE",
    "NOT_IN_CHANNEL",
    "NOT_SAVED",
    "NO_ACCESS",
    "OUTSIDER_REFUSED",
    "PRIVATE_OFFER",
    "PRIVATE_REFUSED",
    "PROMPTS_TITLE",
    "SCOPE_CHANGED",
    "SHARED_CHANNEL_REFUSED",
    "SHARING_UNKNOWN",
    "SLACK_FAILED",
    "SLACK_NOT_CONFIGURED",
    "SLACK_NOT_CONFIGURED_NO_TERMINAL",
    "SOURCES_HEADING",
    "STREAM_REPLACED",
    "THINKING_HARDER",
    "TURN_TIMED_OUT",
    "WHY_ADMINS_ONLY",
    "WHY_LINK_HINT",
    "WHY_LINK_LABEL",
    "WHY_LINK_PLACEHOLDER",
    "WHY_LINK_SUBMIT",
    "WHY_NOT_A_LINK",
    "WHY_NO_TRACE",
    "WHY_NO_TRACE_HERE",
    "WHY_TITLE",
    "WHY_TURN",
    "WHY_WORDS_HIDDEN",
    "WHY_WORDS_UNKNOWN",
    "WORKING",
    "access_lines",
    "applied_filters",
    "ask_help",
    "asked",
    "assistant_greeting",
    "bad_filter_value",
    "basis_viewed",
    "channel_access_line",
    "default_prompt",
    "delete_incomplete",
    "delete_not_allowed",
    "deleted",
    "no_trace",
    "not_a_thread",
    "not_a_user_id",
    "private_root",
    "since_in_future",
    "unknown_groups",
    # The admins' Home tab: documents flagged as outdated
    "HOME_FLAGGED",
    "HOME_FLAGGED_UNKNOWN",
    "HOME_NO_FLAGGED",
    "home_flagged",
]
