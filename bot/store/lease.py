"""The one lease rule that Folio's two leases share: a thread's lock (bot.store.lock) and an accepted delivery's
intake record (bot.store.intake). A lease is renewed every third of it, so two renewals in a row may fail before it
lapses; work whose lease lapsed is cancelled with LEASE_LOST_CANCEL, and says so.

Why two leases, not one (DESIGN.md, "Data flow of one turn"): they hold two different promises. The thread lock is
the thread's ORDER: one turn at a time in a thread, in arrival order (a queue of waiters, fenced per hold), kept on
the thread's Redis Cluster slot and renewed by the one turn that holds it; when it lapses, the next turn waiting in
that thread goes in. The intake record is a question's OWNERSHIP: which process owes this delivery an answer, kept
on the intake's one slot and renewed in one batch for every record of a process; when it lapses, any serving process
takes the question over and runs it again. A delivery waiting in line holds its record but not the lock; a turn
holds both only while it runs. On a cluster the two live on different slots, so no single script can renew both;
what can be shared (this cadence, the cancel message) lives here.
"""

from __future__ import annotations

import os
import socket

RENEWALS_PER_LEASE = 3  # renew every third of a lease: two renewals may fail before it lapses
LEASE_LOST_CANCEL = "lease-lost"  # the cancel message of work whose lease lapsed (a thread's lock, an intake record)


def renew_every(lease_seconds: float) -> float:
    """Seconds between renewals of a lease of `lease_seconds`."""
    return lease_seconds / RENEWALS_PER_LEASE


def process_prefix(pid: int | None = None) -> str:
    """How the names of the lease holders of process `pid` (this one by default) on this host begin: a thread lock's
    token, an intake record's owner. A supervisor that saw the process die frees both by it, at once, rather than
    when they lapse (bot.cli.workers)."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}:"
