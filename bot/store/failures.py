"""What a Redis error means for the operator: one sentence naming the cause and the fix (REDIS_URL's form).

    raise StoreUnavailable(store_failure(exc)) from exc

redis-py says "HELLO must be called with the client already authenticated ..." (RESP3) or "Authentication required"
(RESP2) when REDIS_URL has no password, and "invalid username-password pair ..." when it has a wrong one: both
AuthenticationError, which is also a ConnectionError, so without this an operator read "not reachable".
"""

from __future__ import annotations

from redis.exceptions import AuthenticationError, NoPermissionError, ResponseError

from bot import messages

_NO_PASSWORD_SENT = ("HELLO must be called", "Authentication required", "NOAUTH")


def store_failure(exc: BaseException) -> str:
    """The operator's sentence for `exc`, raised by a Redis command or connection."""
    text = str(exc)
    if isinstance(exc, AuthenticationError) or (isinstance(exc, ResponseError) and text.startswith("NOAUTH")):
        if "without any password configured" in text:
            return messages.REDIS_HAS_NO_PASSWORD
        if any(sign in text for sign in _NO_PASSWORD_SENT):
            return messages.REDIS_NEEDS_PASSWORD
        return messages.REDIS_PASSWORD_REFUSED
    if isinstance(exc, NoPermissionError):
        return messages.redis_permission_refused(text)
    return messages.STORE_UNREACHABLE
