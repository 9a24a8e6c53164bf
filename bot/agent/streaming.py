"""One model call streamed: the Responses API's server-sent events, the answer's text reported as it is written.

    response = await create_streamed(model, params, AnswerWriter(sources, link_for=..., events=..., draft=2))

The call returns the same `Response` a plain `responses.create` would (`response.completed` carries it whole, its id
included), so the tool loop around it is unchanged. Text deltas pass through a `CitationStream` before any
listener hears them: an unknown or half-written marker is never reported.

The events are read as plain dicts through the client's own `post` (the SDK's documented way to make a request its
typed methods do not shape): `responses.create(stream=True)` validates every event into a typed model, about
0.1 ms each, and an answer is ~150 events; read this way a streamed answer costs ~8 ms of CPU instead of ~22 ms.
The SDK still decodes the server-sent events, maps HTTP and connection errors to its exceptions and retries; the
final Response and code runs are built with its lenient `construct`, as it builds unvalidated responses itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openai import AsyncOpenAI, AsyncStream
from openai.types.responses import Response, ResponseCodeInterpreterToolCall

from bot import messages
from bot.agent.events import AnswerText, Listener, ResponseCreated, Step, StepIds
from bot.citation_stream import CitationStream, Piece
from bot.citations import LinkFor
from bot.errors import ModelUnavailable
from bot.models import Chunk

# The events that end a response and carry it whole; `error` ends the stream without one.
_FINAL = ("response.completed", "response.failed", "response.incomplete")


def calculation(item: ResponseCodeInterpreterToolCall, step_ids: StepIds) -> Step:
    """The finished "Calculating" step of one code_interpreter run, with its output."""
    logs = "\n".join(getattr(out, "logs", "") for out in item.outputs or [])
    return Step(step_ids.next("calculate"), "calculate", messages.PROGRESS_CALCULATE, status="done", detail=logs[:500])


class AnswerWriter:
    """Turns one response's text deltas into checked AnswerText events, and its code runs into steps as they end."""

    def __init__(
        self, known: Mapping[str, Chunk], *, link_for: LinkFor, events: Listener, draft: int, step_ids: StepIds,
        shown_code: set[str],
    ) -> None:  # fmt: skip
        self._checker = CitationStream(known, link_for=link_for)
        self._events = events
        self._draft = draft
        self._step_ids = step_ids
        self.shown_code = shown_code  # ids of code runs already reported: the loop does not report them again
        self.created: str | None = None  # the response's id, reported the moment the stream names it

    async def response_created(self, response_id: str) -> None:
        """The provider stores the response from now on: report its id before any of its text, so deleting the
        conversation reaches it even when the turn is cut off mid-stream."""
        self.created = response_id
        await self._events(ResponseCreated(response_id))

    async def calculated(self, item: ResponseCodeInterpreterToolCall) -> None:
        """A code run ended before the text that uses it: show it now, in its place."""
        self.shown_code.add(item.id)
        await self._events(calculation(item, self._step_ids))

    async def write(self, delta: str) -> None:
        for piece in self._checker.feed(delta):
            await self._report(piece)

    async def close(self) -> None:
        for piece in self._checker.close():
            await self._report(piece)

    async def _report(self, piece: Piece) -> None:
        if isinstance(piece, str):
            await self._events(AnswerText(text=piece, draft=self._draft))
        else:
            await self._events(AnswerText(citation=piece, draft=self._draft))


async def create_streamed(model: AsyncOpenAI, params: dict[str, Any], writer: AnswerWriter) -> Response:
    """`POST /responses` with `stream: true`, reporting text as it arrives; returns the final Response.

    HTTP errors before the stream starts and broken connections raise the SDK's errors, as a plain call does."""
    final: Response | None = None
    body = {**params, "stream": True}
    events = await model.post("/responses", cast_to=object, body=body, stream=True, stream_cls=AsyncStream[object])
    async with events:
        async for event in events:
            kind = event.get("type") if isinstance(event, dict) else None
            if kind == "response.created":
                await writer.response_created(event["response"]["id"])
            elif kind == "response.output_text.delta":
                await writer.write(event["delta"])
            elif kind == "response.output_item.done" and event["item"].get("type") == "code_interpreter_call":
                await writer.calculated(ResponseCodeInterpreterToolCall.construct(**event["item"]))
            elif kind in _FINAL:
                final = Response.construct(**event["response"])
            elif kind == "error":
                raise ModelUnavailable(f"The model service failed while answering: {event.get('message')}")
    await writer.close()
    if final is None:
        raise ModelUnavailable("The model service ended its answer stream without a response.")
    return final
