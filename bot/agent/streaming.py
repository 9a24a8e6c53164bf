"""One model call streamed: the Responses API's server-sent events, the answer's text reported as it is written.

    reply = await create_streamed(model, params, AnswerWriter(sources, link_for=..., events=..., draft=2))

The call returns the same `ModelReply` a plain call does (`response.completed` carries the whole response, its id
included), so the tool loop around it is unchanged. Text deltas pass through a `CitationStream` before any listener
hears them: an unknown or half-written marker is never reported.

What a streamed answer costs is the reading: ~150 events an answer, each a token. The request goes through the
client's own `post` (auth, retries, timeouts and HTTP errors as for any call; `cast_to=httpx2.Response` hands back
the response unread), and the events are read here, in `ServerSentEvents`, straight from the body's bytes: no typed
event objects (~0.1 ms each through `responses.create(stream=True)`), no per-event trip through the SDK's decoder.
The text deltas of one body chunk reach the listener as one piece. While an answer trickles in a token at a time,
reading pauses after each piece for about GATHER tokens' time (PACE at most), so the tokens that arrive meanwhile
are read (and shown) together: fewer reads than tokens (each read costs ~25 us of the transport's layers, then the
citation check and the view). PACE is small because nothing tells a pause that the answer is ending (over TLS the
bytes waiting in the kernel cannot be peeked at): its last token and `response.completed` can arrive during one and
wait for it, so the pause is what the turn's end may lag the model by (it was 200 ms). Only a model faster than
100 tokens a second is paused (3 ms a token: about seven tokens a read); a slower one (~60 tokens a second, a
model's usual pace) is read as it comes: a pause shorter than two of its gaps would gather nothing, only hold the
end back. A burst is read straight through.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Mapping
from json.decoder import scanstring as _scanstring  # type: ignore[attr-defined]  # public, not in typeshed
from typing import TYPE_CHECKING, Any, Protocol

import httpx2

from bot import messages
from bot.agent.events import AnswerText, Listener, ResponseCreated, Step, StepIds
from bot.agent.wire import CodeRun, MalformedReply, ModelReply, NotAResponse, request_body
from bot.citation_stream import CitationStream, Piece
from bot.citations import LinkFor
from bot.errors import ModelUnavailable
from bot.models import Chunk

if TYPE_CHECKING:  # the SDK loads with the first model call: `folio ask` without a model never needs it
    from openai import AsyncOpenAI

# The events that end a response and carry it whole; `error` ends the stream without one.
_FINAL = ("response.completed", "response.failed", "response.incomplete")
# Events read without decoding them whole: `response.in_progress` repeats the response `response.created` carried
# (instructions and tools included) and nothing reads it; a text delta needs only its text.
_UNREAD = b'{"type":"response.in_progress"'
_TEXT_DELTA = b'{"type":"response.output_text.delta",'
_DELTA_KEY = '"delta":"'
PACE = 0.02  # seconds to let a trickling answer gather before the next read, at most: what the end may lag by
GATHER = 24  # text pieces a pause lets gather, PACE permitting: a fast trickle (2 ms a token) pauses PACE
TRICKLE_AFTER = 3  # text pieces read before an answer may be judged
WAITED = 0.001  # seconds a read took when it waited for the network (pieces already read come back at once)


def calculation(run: CodeRun, step_ids: StepIds) -> Step:
    """The finished "Calculating" step of one code_interpreter run, with its output."""
    return Step(
        step_ids.next("calculate"), "calculate", messages.PROGRESS_CALCULATE, status="done", detail=run.logs[:500]
    )


class AnswerWriter:
    """Turns one response's text deltas into checked AnswerText events, and its code runs into steps as they end."""

    def __init__(
        self,
        known: Mapping[str, Chunk],
        *,
        link_for: LinkFor,
        events: Listener,
        draft: int,
        step_ids: StepIds,
        shown_code: set[str],
        stored: bool = True,
    ) -> None:
        self._checker = CitationStream(known, link_for=link_for)
        self._events = events
        self._draft = draft
        self._step_ids = step_ids
        self.shown_code = shown_code  # ids of code runs already reported: the loop does not report them again
        self.created: str | None = None  # the response's id, reported the moment the stream names it
        self._stored = stored  # False: the request said `store: false`, so there is nothing to delete

    async def response_created(self, response_id: str) -> None:
        """The provider stores the response from now on: report its id before any of its text, so deleting the
        conversation reaches it even when the turn is cut off mid-stream."""
        self.created = response_id
        if self._stored:
            await self._events(ResponseCreated(response_id))

    async def calculated(self, run: CodeRun) -> None:
        """A code run ended before the text that uses it: show it now, in its place."""
        self.shown_code.add(run.id)
        await self._events(calculation(run, self._step_ids))

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


class ServerSentEvents:
    """The JSON events of a `text/event-stream` body, fed as its bytes arrive (events may span reads)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._cr = b""  # a CR that ended the last read: its LF may start the next
        self.final: ModelReply | None = None  # from the event that ended the response, once it came

    def feed(self, data: bytes) -> Iterator[dict[str, Any]]:
        """Each event completed by `data`, decoded; comments, pings and `[DONE]` are skipped. Lines end with LF or
        CRLF (the service's); a lone CR is not taken for a line end."""
        data = self._cr + data
        self._cr = b"\r" if data.endswith(b"\r") else b""
        self._buffer += (data[:-1] if self._cr else data).replace(b"\r\n", b"\n")
        *complete, self._buffer = self._buffer.split(b"\n\n")
        for block in complete:
            payload = b"\n".join(line[5:].lstrip(b" ") for line in block.split(b"\n") if line.startswith(b"data:"))
            if payload.startswith(_UNREAD):  # the whole response again, unused: not decoded
                continue
            if payload and payload != b"[DONE]":
                event = _delta(payload) or _decoded(payload)
                if isinstance(event, dict):
                    if event.get("type") in _FINAL:
                        self.final = ModelReply.read(event.get("response"))
                    yield event


def _delta(payload: bytes) -> dict[str, Any] | None:
    """A text delta as the service lays it out (`{"type":"response.output_text.delta",...,"delta":"..."`), read
    without decoding the rest of the event (~150 an answer); None for any other payload, decoded whole instead."""
    if not payload.startswith(_TEXT_DELTA):
        return None
    try:
        text = payload.decode()
    except UnicodeDecodeError:  # decoded whole, and reported as malformed there
        return None
    start = text.find(_DELTA_KEY)  # never inside a string: a quote there is escaped
    if start < 0:
        return None
    try:
        delta, _ = _scanstring(text, start + len(_DELTA_KEY))
    except ValueError:  # a broken escape: as above
        return None
    return {"type": "response.output_text.delta", "delta": delta}


def _decoded(payload: bytes) -> object:
    try:
        return json.loads(payload)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than the parser goes
        glimpse = " ".join(payload[:60].decode(errors="replace").split())
        raise MalformedReply(f"a stream event is not JSON ({glimpse})") from exc


def _field(event: dict[str, Any], name: str) -> dict[str, Any]:
    """The object `event` must carry in `name`: a `response.created` its response, an `output_item.done` its item."""
    value = event.get(name)
    if not isinstance(value, dict):
        raise MalformedReply(f"{event.get('type')} came without its {name}")
    return value


async def create_streamed(model: AsyncOpenAI, params: dict[str, Any], writer: AnswerWriter) -> ModelReply:
    """`POST /responses` with `stream: true`, reporting text as it arrives; returns the final reply.

    HTTP errors before the stream starts raise the SDK's errors, as a plain call does; a connection that breaks
    mid-answer, an `error` event, or a stream that ends without its response is ModelUnavailable."""
    body = request_body({**params, "stream": True})
    response = await model.post("/responses", cast_to=httpx2.Response, content=body, stream=True)
    try:
        kind = response.headers.get("content-type", "")
        if not kind.startswith("text/event-stream"):
            raise NotAResponse(f"The model service answered a stream request with {kind or 'no content type'}.")
        final = await _read(response, writer)
    except httpx2.HTTPError as exc:
        raise ModelUnavailable(f"The model service broke off its answer: {exc!r}") from exc
    finally:
        await response.aclose()
    await writer.close()
    return final


async def _read(response: httpx2.Response, writer: AnswerWriter) -> ModelReply:
    events = ServerSentEvents()
    pace = _Pace(asyncio.get_running_loop().time, socket=_socket_of(response))
    chunks = response.aiter_bytes()
    while True:  # to the end, after the final event too: the connection is then reused
        pace.asking()
        try:
            data = await anext(chunks)
        except StopAsyncIteration:
            break
        pieces = await _handle(events.feed(data), writer)
        if pieces and events.final is None:
            await pace.after_text(pieces)
    if events.final is None:
        raise ModelUnavailable("The model service ended its answer stream without a response.")
    return events.final


class _Pace:
    """Whether an answer trickles in (each piece waited for) or comes in bursts; while it trickles, a pause after
    each piece that had to be waited for (or gathered in the pause before), of GATHER times the average gap between pieces (PACE at most), so the
    tokens arriving meanwhile are read in one go and the answer's end waits at most that long. The average over the
    answer, not the last gap, sets the pause: under load, one read may wait for a busy event loop. A trickle slower
    than two tokens a PACE is not paused at all: the pause would gather nothing and only hold the end back."""

    def __init__(self, clock: Callable[[], float], *, socket: Callable[[], _Reading | None] = lambda: None) -> None:
        self._clock = clock
        self._socket = socket
        self._asked = 0.0
        self._first: float | None = None
        self._pieces = 0
        self._paused = False  # the last read followed a pause: what it held gathered meanwhile, not a burst

    def asking(self) -> None:
        self._asked = self._clock()

    async def after_text(self, pieces: int) -> None:
        """After a read that held `pieces` text deltas."""
        now = self._clock()
        # this piece came from the network (or gathered during a pause), not from a burst read already
        waited, self._paused = now - self._asked > WAITED or self._paused, False
        self._first = self._first if self._first is not None else now
        self._pieces += pieces
        gap = (now - self._first) / self._pieces
        if waited and self._pieces > TRICKLE_AFTER and 2 * gap <= PACE:  # a pause that gathers nothing only delays
            await self._pause(min(PACE, GATHER * gap))
            self._paused = True

    async def _pause(self, seconds: float) -> None:
        """Wait, the socket not read meanwhile where it can be paused: the tokens that arrive wait in the kernel and
        come in one read after, instead of one read, HTTP chunk and wake-up each (most of a streamed answer's CPU)."""
        socket = self._socket()
        if getattr(socket, "_reading_paused", False):  # aiohttp paused it (its buffer is full): left to aiohttp
            socket = None
        if socket is not None:
            socket.pause_reading()
        try:
            await asyncio.sleep(seconds)
        finally:
            if socket is not None:
                socket.resume_reading()


class _Reading(Protocol):
    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...


def _socket_of(response: httpx2.Response) -> Callable[[], _Reading | None]:
    """The connection under a streamed response, when it is openai's aiohttp transport (`DefaultAioHttpClient`, what
    Folio builds): aiohttp's own flow control (the protocol's pause_reading / resume_reading) is reached through the
    httpx2 stream and the transport's response. None on any other transport: the pause then only waits."""
    raw = getattr(getattr(response.stream, "_stream", None), "_aiohttp_response", None)

    def socket() -> _Reading | None:
        connection = getattr(raw, "connection", None)  # None once the response let its connection go
        protocol = getattr(connection, "protocol", None)
        reads = callable(getattr(protocol, "pause_reading", None)) and callable(
            getattr(protocol, "resume_reading", None)
        )
        return protocol if reads else None

    return socket


async def _handle(events: Iterator[dict[str, Any]], writer: AnswerWriter) -> int:
    """Act on the events of one read; how many text deltas they held (reported as one piece)."""
    text: list[str] = []
    pieces = 0
    for event in events:
        kind = event.get("type")
        if kind == "response.output_text.delta":
            text.append(str(event.get("delta") or ""))
            pieces += 1
            continue
        if text:
            await writer.write("".join(text))
            text.clear()
        if kind == "response.created":
            response_id = _field(event, "response").get("id")
            if not isinstance(response_id, str):
                raise MalformedReply("response.created came without a response id")
            await writer.response_created(response_id)
        elif kind == "response.output_item.done" and _field(event, "item").get("type") == "code_interpreter_call":
            await writer.calculated(CodeRun.read(event["item"]))
        elif kind == "error":
            raise ModelUnavailable(f"The model service failed while answering: {event.get('message')}")
    if text:
        await writer.write("".join(text))
    return pieces
