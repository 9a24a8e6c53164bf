"""CPU of reading one streamed answer's server-sent events (bot.agent.streaming.ServerSentEvents), without a network:
`.venv/bin/python benchmarks/stream_read.py [--tokens 150] [--runs 300]`.

The events are laid out as the Responses API sends them (compact JSON, `type` first), with Folio's own instructions
and tools echoed in `response.created`, `response.in_progress` and `response.completed` as the service does; each
event is fed as one read, as a token-at-a-time stream arrives.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from bot.agent import prompts  # noqa: E402
from bot.agent.streaming import ServerSentEvents  # noqa: E402


def _event(kind: str, **fields: object) -> bytes:
    data = json.dumps({"type": kind, "sequence_number": 1, **fields}, separators=(",", ":"))
    return f"event: {kind}\ndata: {data}\n\n".encode()


def answer_reads(tokens: int) -> list[bytes]:
    """The reads of one streamed answer of `tokens` text deltas."""
    response = {
        "id": "resp_bench",
        "object": "response",
        "status": "in_progress",
        "model": "bench-model",
        "instructions": prompts.load("instructions"),
        "tools": prompts.request_tools(code_interpreter=False),
        "output": [],
    }
    text = " word" * tokens
    message = {"type": "message", "id": "msg_1", "content": [{"type": "output_text", "text": text}]}
    done = {
        **response,
        "status": "completed",
        "output": [message],
        "usage": {"input_tokens": 900, "output_tokens": 150},
    }
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    return [
        _event("response.created", response=response),
        _event("response.in_progress", response=response),
        *(_event("response.output_text.delta", **where, delta=" word", logprobs=[]) for _ in range(tokens)),
        _event("response.output_text.done", **where, text=text),
        _event("response.completed", response=done),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=150)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    reads = answer_reads(args.tokens)
    started = time.process_time()
    for _ in range(args.runs):
        events = ServerSentEvents()
        for data in reads:
            for _event_read in events.feed(data):
                pass
        assert events.final is not None and events.final.id == "resp_bench"
    spent = (time.process_time() - started) / args.runs
    print(f"{spent * 1000:.3f} ms CPU to read one streamed answer of {args.tokens} tokens ({len(reads)} reads)")


if __name__ == "__main__":
    main()
