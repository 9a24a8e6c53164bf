"""`folio chat` in a pseudo-terminal, as a person meets it: readline editing and history, search-only answers that
quote the fact, follow-ups, an off-topic question, Ctrl-C during an answer and on an empty line, Ctrl-D."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from bot import messages
from tests.cli.terminal import CTRL_D, CTRL_R, LEFT, UP, Terminal, clean_env, until_asked
from tests.fakes.openai_responses import FakeResponses, reply, search, tools

pytestmark = pytest.mark.slow  # starts processes: `python3 dev.py test --quick` skips it

COLUMNS = 80
REFUND = "what is the refund window for monthly plans?"


def answer_after(term: Terminal, mark: int) -> str:
    """The text between a question's line and the next prompt."""
    shown = term.expect(r"\n\n> $", after=mark)
    return term.screen[mark : shown.start()]


def ask(term: Terminal, *keys: bytes | str) -> str:
    mark = term.mark
    for key in keys:
        term.send(key)
    return answer_after(term, mark)


def test_a_search_only_chat_in_a_terminal(tmp_path: Path) -> None:
    term = Terminal.folio("chat", env=clean_env(tmp_path / "data", NO_COLOR="1"), cwd=tmp_path, columns=COLUMNS)
    term.expect(r"Ctrl-C cancels an answer; exit or Ctrl-D ends the chat\.\n\n> $")

    refund = ask(term, REFUND + "\r")
    assert re.search(
        r"“… Monthly plans: a customer on a monthly plan may request a full refund within\s+14 days", refund
    )
    assert "(dated 2026-01-12)" in refund and "(dated 2025-01-15)" in refund  # which policy is the later one
    assert "[1] refund_policy_2026.pdf, page 1  file://" in refund
    prose = [line for line in refund.splitlines() if not line.startswith("[")]  # citation lines carry long URLs
    assert max(map(len, prose)) <= COLUMNS  # wrapped to the terminal ...
    assert "refund\nwindow" not in refund and not re.search(r"\w-\n\w", refund)  # ... between words, none split
    assert not any(line.startswith(">") for line in refund.splitlines())  # quotes do not look like the prompt

    # Left arrow moves the cursor (readline) instead of typing ^[[D: "Acm?" becomes "Acme?".
    acme = ask(term, "what are the payment terms with Acm?", LEFT, "e\r")
    assert "Payment terms: net 30." in acme and "supplier_contract_acme.pdf, page 1" in acme

    follow_up = ask(term, "and the termination notice?\r")
    assert "searching: acme termination notice" in follow_up
    assert "60 days' written notice" in follow_up and "[1] supplier_contract_acme.pdf, page 2" in follow_up

    off_topic = ask(term, "who is the CEO of Larkspur?\r")
    assert f"({messages.NOT_IN_DOCUMENTS})" in off_topic
    assert messages.CLOSEST_PASSAGE in off_topic and "[1]" in off_topic and "[2]" not in off_topic

    # Ctrl-R finds an earlier question; Enter asks it again.
    again = ask(term, CTRL_R, "refund w", "\r")
    assert "[2] refund_policy_2025.pdf, page 1" in again

    mark = term.mark
    term.send("half a questi")
    term.expect("questi", after=mark)
    term.interrupt()  # on a typed line: the line is dropped, the chat goes on
    term.expect(r"questi\n\n> $", after=mark)

    term.send(CTRL_D)
    assert term.wait() == 0
    assert term.raw.endswith(b"> \r\n")  # the shell's prompt gets a line of its own
    assert "Traceback" not in term.screen

    history = (tmp_path / "data" / "chat_history").read_text()
    assert REFUND in history and "who is the CEO of Larkspur?" in history


def test_ctrl_c_cancels_an_answer_then_ends_the_chat_on_an_empty_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "chat_history").write_text(REFUND + "\n")  # asked in an earlier session
    with FakeResponses() as fake:
        fake.script(tools(search("refund window"), latency=20.0), reply("Never shown [S1]."))
        env = clean_env(data, NO_COLOR="1", OPENAI_API_KEY="sk-fake", OPENAI_BASE_URL=fake.base_url)
        term = Terminal.folio("chat", env=env, cwd=tmp_path, columns=COLUMNS)
        term.expect(r"> $")

        mark = term.mark
        term.send(UP)  # the history of the earlier session
        term.expect(re.escape(REFUND), after=mark)
        term.send("\r")
        until_asked(fake)
        term.interrupt()  # during the answer: it is cancelled at once, the chat goes on
        started = time.monotonic()
        cancelled = answer_after(term, mark)
        assert time.monotonic() - started < 10  # not when the model answers, 20 s later
        assert messages.CHAT_CANCELLED in cancelled and "Never shown" not in cancelled
        fake.leave_unused()  # the answer was cancelled before the model was asked for it

        term.interrupt()  # on an empty line: the chat ends
        assert term.wait(timeout=10) == 130
    assert "Traceback" not in term.screen and term.raw.endswith(b"> \r\n")
