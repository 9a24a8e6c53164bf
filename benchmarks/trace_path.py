"""The path of one Slack mention through Folio's code, from the HTTP request to the posted answer.

    .venv/bin/python benchmarks/trace_path.py            # the figures, and the files in the order they were entered
    .venv/bin/python benchmarks/trace_path.py --steps    # also every stay, with the function it began in

Two paths are reported: the mention's, from the HTTP request (through Bolt's listener and the durable consumer), and
the turn's request's from `bot/turns/turn.py:take_turn` (its first start until that coroutine returned), the one turn
every surface shares.

The real Bolt app serves 127.0.0.1 against the fake Slack and fake model (tests/fakes/), the local index of the
shipped sample corpus and an embedded Redis. One signed `app_mention` is POSTed; the model searches once, then answers.
`sys.setprofile` watches this thread (the event loop: the fakes answer from threads of their own) from the moment
the request is sent until every turn has ended, and notes each function of `bot/` as it starts (a coroutine resumed
after an `await` is not a new start).

The path is followed as the question travels: a start is on it when one of the function's arguments carries the
mention (the HTTP request, Bolt's request, the event or its envelope, the TurnRequest, the turn's Answer). A *stay*
is a run of such starts in one file of `bot/`, entered from another file: how often the reader who follows the
question must open another file. A file's *entries* are its stays; a *return* is a stay in a file the path was in
before. Values, words and the error tree (`models`, `messages`, `errors`, `text`, `metrics`, `logs`) are left out:
leaves every layer may use, opened for a definition rather than followed. Every start, carried or not (the stream's
sender task, the search, the HTTP client's hooks interleave there), is counted too, for the record.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402

from bot.app import Given, open_folio  # noqa: E402
from bot.config import ChannelPolicy, Settings  # noqa: E402
from bot.slack.app import EVENTS_PATH, build_app, web_app  # noqa: E402
from tests.fakes.openai_responses import FakeResponses, reply, search, tools  # noqa: E402
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack  # noqa: E402
from tests.slack.harness import SECRET, sign  # noqa: E402

BOT = ROOT / "bot"
CHANNEL = "C0TRACE01"
LEAVES = {"models.py", "messages.py", "errors.py", "text.py", "metrics.py", "logs.py"}
SURFACE = ("slack/", "turns/", "app/", "store/", "tasks.py")


def carries(value: object) -> bool:
    """Whether `value` is the mention in one of its forms along the path."""
    from aiohttp.web import Request
    from slack_bolt.request.async_request import AsyncBoltRequest

    from bot.models import Answer

    try:
        from bot.turns import TurnRequest
    except ImportError:  # before issue 19 (to measure the code as it was)
        from bot.slack.turns import TurnRequest  # type: ignore[no-redef]

    if isinstance(value, Request | AsyncBoltRequest | TurnRequest | Answer):
        return True
    parts = getattr(sys.modules.get("bot.turns.turn"), "_Parts", None)  # the turn's own parts hold the request
    if parts is not None and isinstance(value, parts):
        return True
    return isinstance(value, dict) and (value.get("type") == "app_mention" or "event" in value)


class PathTrace:
    """The bot/ functions started on this thread, in order (file relative to bot/, function name), and those of them
    whose arguments carry the mention."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, str]] = []
        self.carried: list[tuple[str, str]] = []
        self._seen: dict[int, FrameType] = {}  # frames already started (a resumed coroutine calls again); held, so
        # that no later frame can reuse the id of one that ended
        self._answer: FrameType | None = None  # the frame of turns/turn.py:take_turn
        self.answer_span = (0, 0)  # carried[first:last]: the starts from take_turn's first start to its return

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "return" and frame is self._answer:  # a coroutine returns at each await too: the last one counts
            self.answer_span = (self.answer_span[0], len(self.carried))
        if event != "call":
            return
        path = frame.f_code.co_filename
        if not path.startswith(str(BOT)):
            return
        if id(frame) in self._seen:
            return
        self._seen[id(frame)] = frame
        caller = frame.f_back
        caller_file = caller.f_code.co_filename if caller is not None else ""
        name = path[len(str(BOT)) + 1 :]
        self.starts.append((name, frame.f_code.co_qualname if caller_file != path else ""))
        code = frame.f_code
        arguments = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if self._answer is None and name == "turns/turn.py" and code.co_qualname == "take_turn":
            self._answer, self.answer_span = frame, (len(self.carried), len(self.carried))
        if any(carries(frame.f_locals.get(argument)) for argument in arguments):
            self.carried.append((name, code.co_qualname))


def stays(starts: list[tuple[str, str]], keep: tuple[str, ...] | None) -> list[tuple[str, str]]:
    """The runs of starts in one file (leaves left out; only files under `keep` when given)."""
    runs: list[tuple[str, str]] = []
    for name, function in starts:
        if name in LEAVES:
            continue
        if keep is not None and not name.startswith(keep):
            continue
        if not runs or runs[-1][0] != name:
            runs.append((name, function))
    return runs


async def trace_one_mention() -> PathTrace:
    with tempfile.TemporaryDirectory(prefix="folio-trace-") as folder, FakeSlack() as slack, FakeResponses() as model:
        turn = (tools(search("refund window monthly plans")), reply("Monthly plans: 14 days [S1]."))
        model.script(*turn, *turn)  # the warm-up and the traced mention
        async with AsyncExitStack() as stack:
            settings = Settings(
                slack_bot_token=slack.token,
                slack_signing_secret=SECRET,
                slack_api_url=slack.base_url,
                folio_data_dir=Path(folder),
                folio_code_interpreter=False,
            )
            client = model.client()
            stack.push_async_callback(client.close)
            policy = ChannelPolicy.model_validate({"channels": {CHANNEL: {"container": "sample"}}})
            folio = await stack.enter_async_context(
                open_folio(settings, Given(model=client, policy=policy), serving=True)
            )
            runner = web.AppRunner(web_app(build_app(folio)), access_log=None)
            await runner.setup()
            stack.push_async_callback(runner.cleanup)
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            url = f"http://127.0.0.1:{runner.addresses[0][1]}{EVENTS_PATH}"
            async with aiohttp.ClientSession() as http:
                await _mention(http, url, "1900000000.000001")  # warm: imports, connections, the index
                await folio.tasks.drain()
                trace = PathTrace()
                sys.setprofile(trace)
                try:
                    await _mention(http, url, "1900000000.000002")
                    await folio.tasks.drain()
                finally:
                    sys.setprofile(None)
        shown = [f"{message.markdown} {message.text}" for message in slack.messages.values()]
    assert sum("14 days" in text for text in shown) == 2, shown  # both mentions were answered
    return trace


async def _mention(http: aiohttp.ClientSession, url: str, ts: str) -> None:
    event = {
        "type": "app_mention",
        "user": "U0TRACE01",
        "text": f"<@{BOT_USER}> refund window for monthly plans?",
        "ts": ts,
        "channel": CHANNEL,
        "event_ts": ts,
    }
    body = json.dumps({"type": "event_callback", "team_id": TEAM, "event_id": f"Ev{ts}", "event": event})
    async with http.post(url, data=body, headers={**sign(body), "Content-Type": "application/json"}) as response:
        assert response.status == 200, response.status


def report(title: str, runs: list[tuple[str, str]], *, steps: bool) -> None:
    entries = Counter(name for name, _ in runs)
    returns = sum(count - 1 for count in entries.values())
    print(
        f"{title}: {len(runs)} stays in {len(entries)} files, {returns} returns; most entered: "
        + ", ".join(f"{name} {count}" for name, count in entries.most_common(6))
    )
    if steps:
        for number, (name, function) in enumerate(runs, 1):
            print(f"  {number:3d} {name} {function}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", action="store_true", help="list every stay")
    args = parser.parse_args()
    trace = asyncio.run(trace_one_mention())
    report("the mention's path", stays(trace.carried, None), steps=args.steps)
    first, last = trace.answer_span
    report("the request's path from turns/turn.py:take_turn", stays(trace.carried[first:last], None), steps=args.steps)
    report(
        "every start, around the agent (slack/, turns/, app/, store/, tasks)", stays(trace.starts, SURFACE), steps=False
    )
    report("every start, agent and search included", stays(trace.starts, None), steps=False)
    cycles = import_cycles()
    print("import cycles in bot/:", "; ".join(" <-> ".join(cycle) for cycle in cycles) or "none")


def import_cycles() -> list[list[str]]:
    """Cycles among bot/'s module-level imports (those under `if TYPE_CHECKING:` and inside functions left out)."""
    import ast

    modules = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for path in BOT.rglob("*.py")
    }
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.parse(path.read_text()).body:
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [
                    f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                    for alias in node.names
                ]
            edges[name].update(target for target in targets if target in modules and target != name)
    cycles, index, low, stack, on_stack = [], {}, {}, [], set()

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in edges[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in edges:
        if node not in index:
            visit(node)
    return cycles


if __name__ == "__main__":
    main()
