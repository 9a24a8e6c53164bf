"""A process that takes a thread's lock and holds it, for tests that kill or pause a holder.

    python -m tests.store.lock_holder REDIS_URL PREFIX LEASE_SECONDS

Prints "held FENCE" once it holds the lock, then works for a minute inside it; prints "lost" when its lease lapses
(LeaseLost) and exits.
"""

from __future__ import annotations

import asyncio
import sys

from redis.asyncio import Redis

from bot.errors import LeaseLost
from bot.store import ConversationStore, ThreadKey

THREAD = ThreadKey(team="T1", channel="C1", thread_ts="1.0")


async def main(url: str, prefix: str, lease: float) -> None:
    store = ConversationStore(Redis.from_url(url), prefix=prefix, lock_lease_seconds=lease)
    lock = store.lock(THREAD)
    try:
        async with lock:
            print(f"held {lock.fence}", flush=True)
            await asyncio.sleep(60)
    except LeaseLost:
        print("lost", flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
