"""The server-sent events of one streamed Responses API answer, as tests/fakes/openai_responses.py writes them.

The order is the service's: `response.created`, `response.in_progress`, then per output item
`response.output_item.added`, its text deltas (or function call arguments) and `response.output_item.done`, then
`response.completed` with the whole Response. Every event is checked against its schema in
../shared/specs/openai/openapi.json when a `check` is given.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any

from tests.fakes.openai_spec import problems as schema_problems

Json = dict[str, Any]

_TOKEN = re.compile(r"\s*\S{1,4}|\s+")  # word pieces, as a tokenizer cuts them: " prot", "ecte", "d", " [S1", "]."


def tokens_of(text: str, given: tuple[str, ...] | None = None) -> list[str]:
    """The deltas a text is written in: `given` when a test cut it itself, else word pieces."""
    return list(given) if given else _TOKEN.findall(text)


# Which schema of the OpenAPI document each streamed event is checked against.
EVENT_SCHEMAS = {
    "response.created": "ResponseCreatedEvent",
    "response.in_progress": "ResponseInProgressEvent",
    "response.output_item.added": "ResponseOutputItemAddedEvent",
    "response.content_part.added": "ResponseContentPartAddedEvent",
    "response.output_text.delta": "ResponseTextDeltaEvent",
    "response.output_text.done": "ResponseTextDoneEvent",
    "response.content_part.done": "ResponseContentPartDoneEvent",
    "response.function_call_arguments.delta": "ResponseFunctionCallArgumentsDeltaEvent",
    "response.function_call_arguments.done": "ResponseFunctionCallArgumentsDoneEvent",
    "response.output_item.done": "ResponseOutputItemDoneEvent",
    "response.completed": "ResponseCompletedEvent",
}


class EventStream:
    """The server-sent events of one streamed response, written with the model's latency and per-token delays."""

    def __init__(
        self,
        response: Json,
        *,
        tokens: tuple[str, ...] | None,
        latency: float,
        token_delay: float,
        check: Callable[[list[str]], None] | None,
    ) -> None:
        self.response = response
        self.tokens = tokens
        self.latency = latency
        self.token_delay = token_delay
        self.check = check  # hears each event's schema violations; None = not checked
        self.broken_after: int | None = None  # text deltas written before the connection drops (None: never)
        self.mangle: Callable[[Json], Json | str] | None = None  # each event as a broken server sends it
        self._sequence = itertools.count(0)

    def events(self) -> Iterator[tuple[Json, float]]:
        """(event, seconds to wait before writing it), in the order the service sends them."""
        started = {key: value for key, value in self.response.items() if key != "usage"}  # no usage until done
        started.update(status="in_progress", output=[], completed_at=None)
        yield self._event("response.created", response=started), 0.0
        yield self._event("response.in_progress", response=started), 0.0
        wait = self.latency
        for index, item in enumerate(self.response["output"]):
            for event, delay in self._item_events(index, item):
                yield event, delay + wait
                wait = 0.0
        if self.broken_after is None:
            yield self._event("response.completed", response=self.response), wait

    def _item_events(self, index: int, item: Json) -> Iterator[tuple[Json, float]]:
        opened = {**item, "status": "in_progress"}
        if item["type"] == "message":
            yield from self._message_events(index, {**opened, "content": []}, item)
            return
        if item["type"] == "function_call":
            yield self._event("response.output_item.added", output_index=index, item={**opened, "arguments": ""}), 0
            yield (
                self._event(
                    "response.function_call_arguments.delta",
                    item_id=item.get("id", ""),
                    output_index=index,
                    delta=item["arguments"],
                ),
                0.0,
            )
            yield (
                self._event(
                    "response.function_call_arguments.done",
                    item_id=item.get("id", ""),
                    name=item["name"],
                    output_index=index,
                    arguments=item["arguments"],
                ),
                0.0,
            )
        else:
            yield self._event("response.output_item.added", output_index=index, item=opened), 0.0
        yield self._event("response.output_item.done", output_index=index, item=item), 0.0

    def _message_events(self, index: int, opened: Json, item: Json) -> Iterator[tuple[Json, float]]:
        text = item["content"][0]["text"]
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        yield self._event("response.output_item.added", output_index=index, item=opened), 0.0
        yield self._event("response.content_part.added", **where, part=empty), 0.0
        for number, token in enumerate(tokens_of(text, self.tokens)):
            if number == self.broken_after:
                return
            yield (
                self._event("response.output_text.delta", **where, delta=token, logprobs=[]),
                (self.token_delay if number else 0.0),
            )
        yield self._event("response.output_text.done", **where, text=text, logprobs=[]), 0.0
        yield self._event("response.content_part.done", **where, part=item["content"][0]), 0.0
        yield self._event("response.output_item.done", output_index=index, item=item), 0.0

    def _event(self, kind: str, **fields: Any) -> Json:
        event = {"type": kind, "sequence_number": next(self._sequence), **fields}
        if self.check is not None:
            found = schema_problems(event, EVENT_SCHEMAS[kind])
            if found:  # a bug in the fake itself: make the test fail loudly
                self.check(found)
        return event
