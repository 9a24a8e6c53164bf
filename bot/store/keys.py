"""Where a thread's state lives in Redis, and where Folios before issue 23 kept it.

    {prefix}:conv:{{team:channel:thread_ts}}        the Conversation (JSON)
    {prefix}:resp:{{team:channel:thread_ts}}        the set of the thread's response ids
    {prefix}:trace:{{team:channel:thread_ts}}       the list of its turn traces
    {prefix}:lock:{{team:channel:thread_ts}}:*      its lock (bot.store.lock)

The braces are the thread's hash tag: Redis Cluster puts every key of one thread in one slot, so a MULTI/EXEC, a
script or a multi-key DEL over them is allowed there (a cluster refuses keys of several slots with CROSSSLOT).

Before issue 23, `conv`, `resp` and `trace` had no tag (`{prefix}:conv:team:channel:thread_ts`). Those deployments
never ran on a cluster (they could not), so on a single Redis `ADOPT` renames a thread's old keys to the new names
the first time Folio touches the thread again (before the ack of a new event, in `load` and in `exists`), and
`delete` deletes both forms. Every old key expires 30 days after its last write (THIRTY_DAYS), so `ADOPT` and
`legacy` can go in a release made more than 30 days after every deployment ran this one.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.store.scripts import Script


@dataclass(frozen=True)
class ThreadKey:
    """Where a conversation lives in Slack: workspace, channel and the thread's root message ts."""

    team: str
    channel: str
    thread_ts: str

    def __str__(self) -> str:
        return f"{self.team}:{self.channel}:{self.thread_ts}"


@dataclass(frozen=True)
class ThreadKeys:
    """A thread's keys: one hash slot."""

    conversation: str
    responses: str
    traces: str


def thread_keys(prefix: str, thread: ThreadKey) -> ThreadKeys:
    tag = f"{{{thread}}}"
    return ThreadKeys(f"{prefix}:conv:{tag}", f"{prefix}:resp:{tag}", f"{prefix}:trace:{tag}")


def legacy(prefix: str, thread: ThreadKey) -> ThreadKeys:
    """The same keys as Folio named them before issue 23 (no hash tag): on a single Redis only."""
    return ThreadKeys(f"{prefix}:conv:{thread}", f"{prefix}:resp:{thread}", f"{prefix}:trace:{thread}")


def trace_key(prefix: str, thread: ThreadKey) -> str:
    """The trace list's key, for `bot.store.traces` (whose prefix already ends in `:trace`)."""
    return f"{prefix}:{{{thread}}}"


# KEYS old conv, new conv, old resp, new resp, old trace, new trace. An old key is renamed to its new name (RENAME
# keeps the expiry). Both exist only when a rolling upgrade let an older Folio write the thread after a newer one
# adopted it: the newer record stays, the old record's response ids and response set join the new set (so that
# deleting the thread still reaches them at the provider), and the old keys go.
_ADOPT_SOURCE = """
local moved = 0
for i = 1, 5, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    if redis.call('EXISTS', KEYS[i + 1]) == 0 then
      redis.call('RENAME', KEYS[i], KEYS[i + 1])
      moved = moved + 1
    else
      if i == 1 then
        local ok, old = pcall(cjson.decode, redis.call('GET', KEYS[1]))
        if ok and type(old) == 'table' and type(old.response_ids) == 'table' then
          for _, id in ipairs(old.response_ids) do redis.call('SADD', KEYS[4], id) end
        end
      elseif i == 3 then
        for _, id in ipairs(redis.call('SMEMBERS', KEYS[3])) do redis.call('SADD', KEYS[4], id) end
      end
      redis.call('DEL', KEYS[i])
    end
  end
end
if redis.call('TTL', KEYS[4]) == -1 then redis.call('EXPIRE', KEYS[4], ARGV[1]) end
return moved
"""
ADOPT = Script(_ADOPT_SOURCE)


def adopt_keys(prefix: str, thread: ThreadKey) -> tuple[str, ...]:
    """ADOPT's KEYS for `thread` (old and new of conv, resp, trace)."""
    old, new = legacy(prefix, thread), thread_keys(prefix, thread)
    return (old.conversation, new.conversation, old.responses, new.responses, old.traces, new.traces)
