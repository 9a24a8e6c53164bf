"""The shared side-by-side harness (../shared/peer-bench/pbench.py), with each of Folio's conversations in its own
channel: `PEER_DIR=... .venv/bin/python benchmarks/peer_run.py --bot folio-on --threads 30 [pbench options]`.

Why: the template's driver puts each conversation in its own DM channel (`D{number}`), while the harness puts all of
Folio's conversations in one channel. Slack allows chat.postMessage about once a second per channel, and Folio keeps
that pace (bot.app.slack_calls.ChannelPacer); 30 conversations in one channel then wait for the pace (about one
answer a second), not for Folio. One channel per conversation gives Folio the template's shape. Everything else is
the shared harness, unchanged. `FOLIO_ONE_CHANNEL=1` runs it as shared (one channel)."""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HARNESS = Path(os.environ.get("PEER_BENCH", ROOT.parent / "shared" / "peer-bench")) / "pbench.py"
sys.path.insert(0, str(ROOT))

import benchmarks.loadgen as lg  # noqa: E402

shared_events = lg.question_events


def own_channel_events(question: str, *, ts: str, thread_ts: str | None, user: str, mention: bool = True) -> list:
    """The harness's events, in the channel of this conversation (its user is `UBENCH{number}`)."""
    events = shared_events(question, ts=ts, thread_ts=thread_ts, user=user, mention=mention)
    channel = f"CBENCH{user.removeprefix('UBENCH')}"
    return [{**event, "channel": channel} for event in events]


if __name__ == "__main__":
    if not os.environ.get("FOLIO_ONE_CHANNEL"):
        lg.question_events = own_channel_events  # the harness calls lg.question_events at run time
    sys.argv[0] = str(HARNESS)
    runpy.run_path(str(HARNESS), run_name="__main__")
