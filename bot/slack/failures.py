"""The sentence a Slack thread shows for a failed turn: what happened and what to do next."""

from __future__ import annotations

from slack_sdk.errors import SlackApiError

from bot import messages
from bot.errors import FolioError, ModelUnavailable, SearchUnavailable, StoreUnavailable


def describe_failure(error: BaseException) -> str:
    """The sentence the thread shows for an error: what happened and what to do next."""
    if isinstance(error, SearchUnavailable):
        return messages.SEARCH_DOWN
    if isinstance(error, ModelUnavailable):
        return messages.MODEL_UNAVAILABLE
    if isinstance(error, StoreUnavailable):
        return messages.STORE_DOWN
    if isinstance(error, FolioError):
        return str(error)  # the others are written for the person who asked (not connected, bad filter, busy)
    if isinstance(error, TimeoutError):
        return messages.TURN_TIMED_OUT
    if isinstance(error, SlackApiError):
        outside = error.response.get("error") in {"not_in_channel", "channel_not_found"}  # private: not found
        return messages.NOT_IN_CHANNEL if outside else messages.SLACK_FAILED
    return messages.UNEXPECTED
