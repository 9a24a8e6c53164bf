"""What a Redis error means for the operator: one sentence naming the cause and the fix (REDIS_URL's form).

    raise StoreUnavailable(store_failure(exc)) from exc

redis-py says "HELLO must be called with the client already authenticated ..." (RESP3) or "Authentication required"
(RESP2) when REDIS_URL has no password, and "invalid username-password pair ..." when it has a wrong one: both
AuthenticationError, which is also a ConnectionError, so without this an operator read "not reachable".

Redis Cluster: a plain client on a cluster node reads MOVED (or CROSSSLOT), a cluster client on a plain Redis
"Cluster mode is not enabled on this node" (a RedisClusterException, which is no RedisError: `REDIS_FAILURES`).
"""

from __future__ import annotations

from redis.exceptions import (
    AuthenticationError,
    ClusterCrossSlotError,
    ClusterDownError,
    CrossSlotTransactionError,
    MovedError,
    NoPermissionError,
    RedisClusterException,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
)

from bot import messages

_NO_PASSWORD_SENT = ("HELLO must be called", "Authentication required", "NOAUTH")
REDIS_FAILURES = (RedisError, RedisClusterException)  # what a Redis command or connection raises, cluster or not


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
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return messages.redis_tls_refused(text[text.index("certificate verify failed") :].split("(_ssl")[0].strip())
    if isinstance(exc, MovedError):
        return messages.REDIS_IS_A_CLUSTER
    if isinstance(exc, (ClusterCrossSlotError, CrossSlotTransactionError)):
        return messages.REDIS_CROSSSLOT
    if isinstance(exc, (ClusterDownError, SlotNotCoveredError)):
        return messages.redis_cluster_down(text)
    if isinstance(exc, RedisClusterException):
        if "not enabled" in text:
            return messages.REDIS_IS_NOT_A_CLUSTER
        return messages.redis_cluster_down(text)
    return messages.STORE_UNREACHABLE
