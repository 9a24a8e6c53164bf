"""Errors a user or an operator can act on.

    FolioError                  every message says what to do next
    ├── ConfigurationError      a setting, the channel file or the data folder is wrong (start-up)
    │   └── ModelMisconfigured  the model service refused a setting: key, model or deployment, reasoning, code tool
    │       └── KeepsNoResponses  the server keeps no responses (it refused previous_response_id): in auto mode
    │                             the agent resends the conversation; with FOLIO_MODEL_STATE=server, misconfigured
    ├── InvalidInput            a question, filter or command the user can correct
    │   └── UnreadableFile      a file indexing cannot read (corrupt, encrypted, no text); the run goes on
    │       ├── MissingConverter  the program that reads this kind of file is not installed: skipped, package named
    │       └── TextTooLong       its text (a mail's with its attachments) passes FOLIO_MAX_FILE_CHARS
    ├── NotConnected            this channel or DM may not search any documents
    ├── Refused                 the policy keeps Folio out of here (shared outside the organisation, an outsider)
    ├── SearchUnavailable       the search service failed or refused the request
    ├── ModelUnavailable        the model service failed after the SDK's retries (timeout, connection, 5xx)
    ├── ModelRefused            the model service refused a request; retrying the same one will not help
    │   ├── QuotaExceeded       the account's quota is used up (429 insufficient_quota)
    │   ├── RateLimited         the service rate-limits Folio, still after the SDK's retries (HTTP 429)
    │   ├── ContentFiltered     the provider's content filter blocked the question or the answer
    │   └── ContextTooLong      the conversation no longer fits the model's context window
    ├── HistoryExpired          the provider no longer holds the thread's previous response
    ├── StoreUnavailable        Redis could not be reached
    ├── AccessUnavailable       Slack could not say who is in which user group, and nothing was cached
    ├── ThreadBusy              earlier turns of a Slack thread held it longer than a new one may wait
    ├── LeaseLost               a turn lost its thread's lock (its lease lapsed); another attempt runs it again
    └── OverLimit               a daily token budget or the questions-per-minute cap refuses the turn before any
                                model call; says which limit and when it resets

Every class of this module is in the tree (tests/test_errors_tree.py keeps it so).

SDK exceptions (openai, azure, redis, slack_sdk) are translated where they are caught: `raise X(...) from exc`.
This module imports nothing of ours.
"""

from __future__ import annotations


class FolioError(Exception):
    """Base class: `str(error)` is a complete sentence a person can act on."""


class ConfigurationError(FolioError):
    """A setting, the channel policy file or the data folder is missing or malformed."""


class InvalidInput(FolioError):
    """Input the user can correct: an empty question, an unknown tag key, a malformed filter."""


class UnreadableFile(InvalidInput):
    """A file that cannot be read (corrupt, encrypted, not text); the run reports it and goes on."""


class MissingConverter(UnreadableFile):
    """The program that reads a file of this kind (LibreOffice, OCRmyPDF) is not installed: the file is skipped,
    and the message names the Debian package to install."""


class TextTooLong(UnreadableFile):
    """A file's text passes FOLIO_MAX_FILE_CHARS: refused as soon as reading passes it (a mail counts its
    attachments' text with its own)."""


class NotConnected(FolioError):
    """The channel (or DM) has no container of documents it may search."""


class Refused(FolioError):
    """Folio does not answer here: a channel shared outside the organisation, or a person of another one."""


class SearchUnavailable(FolioError):
    """The search backend could not answer."""


class ModelUnavailable(FolioError):
    """The model service could not answer, after the SDK's own retries."""


class HistoryExpired(FolioError):
    """The provider no longer holds the conversation's previous response."""


class StoreUnavailable(FolioError):
    """Conversation state (Redis) could not be read or written."""


class AccessUnavailable(FolioError):
    """Slack could not say which user groups a person is in, and no earlier answer is cached: refuse, never widen."""


class ThreadBusy(FolioError):
    """Earlier turns of the thread kept the lock longer than a waiter may wait."""


class LeaseLost(FolioError):
    """The holder of a thread's lock could not renew its lease in time, so its work was stopped: another holder may
    have the thread now. The turn is run again by whoever picks its record up (bot.turns.consumer)."""


class ModelMisconfigured(ConfigurationError):
    """The model service refused one of Folio's settings. `str()` is for the person who asked (ask an admin); for
    the operator, `setting` names the variable, `detail` what the service answered, and `fix` what to do."""

    def __init__(self, message: str, *, setting: str, detail: str, fix: str) -> None:
        super().__init__(message)
        self.setting = setting
        self.detail = detail
        self.fix = fix


class KeepsNoResponses(ModelMisconfigured):
    """The model service keeps no responses: it refused `previous_response_id` (llama.cpp's server). In auto mode
    the agent switches to resending the conversation; with FOLIO_MODEL_STATE=server it is shown as misconfigured."""


class ModelRefused(FolioError):
    """The model service refused the request (a 4xx other than the ones below); `detail` is for the log."""

    def __init__(self, message: str, *, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class QuotaExceeded(ModelRefused):
    """The model account's quota or credit is used up: an admin must act, retrying will not help."""


class RateLimited(ModelRefused):
    """The model service is rate-limiting Folio, still after the SDK's retries: try again later, or raise the limit."""


class ContentFiltered(ModelRefused):
    """The provider's content filter blocked the question, the passages sent with it, or the answer."""


class ContextTooLong(ModelRefused):
    """The input no longer fits the model's context window."""


class OverLimit(FolioError):
    """A daily token budget or the questions-per-minute cap stops this turn before any model call."""
