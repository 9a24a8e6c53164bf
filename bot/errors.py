"""Errors a user or an operator can act on.

    FolioError                  every message says what to do next
    ├── ConfigurationError      a setting, the channel file or the data folder is wrong (start-up)
    ├── InvalidInput            a question, filter or command the user can correct
    │   └── UnreadableFile      a file indexing cannot read (corrupt, encrypted, no text); the run goes on
    ├── NotConnected            this channel or DM may not search any documents
    ├── SearchUnavailable       the search service failed or refused the request
    ├── ModelUnavailable        the model service failed after the SDK's retries
    ├── HistoryExpired          the provider no longer holds the thread's previous response
    ├── StoreUnavailable        Redis could not be reached
    ├── AccessUnavailable       Slack could not say who is in which user group, and nothing was cached
    └── ThreadBusy              earlier turns of a Slack thread held it longer than a new one may wait

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


class NotConnected(FolioError):
    """The channel (or DM) has no container of documents it may search."""


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
