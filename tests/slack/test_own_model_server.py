"""Your own model server (issue 23, finding 8): a llama.cpp-style server that keeps no responses, and Azure OpenAI,
each driven through Slack with the settings README "Use your own model server" gives.

Seen: llama.cpp's server answers `previous_response_id` with HTTP 400 ("llama.cpp does not support
'previous_response_id'."), and Folio sent it on every tool round: every question with a search failed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.slack.render import ACTION_DELETE
from tests.fakes.model_servers import LLAMA_NO_PREVIOUS
from tests.fakes.openai_responses import FakeResponses, Request, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL, Harness

README = Path(__file__).resolve().parents[2] / "README.md"
QUESTION = "What protection is there against balance billing?"
FOLLOW_UP = "Does that hold out of network?"


def recipe(title: str, **urls: str) -> dict[str, Any]:
    """The settings of README's recipe under `title` (its first ```sh block), with its example URLs replaced by the
    fakes' (`{"http://localhost:8080": fake.endpoint}`), as Settings keywords."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(title) :]
    block = section[section.index("```sh") + len("```sh") : section.index("```", section.index("```sh") + 5)]
    settings: dict[str, Any] = {}
    for line in block.splitlines():
        found = re.match(r"^([A-Z_]+)=(\S+)", line.strip())
        if found:
            name, value = found.groups()
            for example, real in urls.items():
                value = value.replace(example, real)
            settings[name.lower()] = value
    return settings


@asynccontextmanager
async def folio_on(
    slack: FakeSlack, fake: FakeResponses, redis_url: str, corpus_index: Path, **settings: Any
) -> AsyncIterator[Harness]:
    """The Slack app with its model client built from `settings` (as `folio serve` builds it), not handed in."""
    async with running_app(slack, fake, redis_url, corpus_index, with_model=False, **settings) as harness:
        yield harness


def script_two_turns(fake: FakeResponses) -> None:
    fake.script(
        tools(search("balance billing protection")), reply("You are protected from balance billing [S1]."),
        tools(search("balance billing out of network")), reply("Yes, out of network too [S1]."),
    )  # fmt: skip


def user_texts(request: Request) -> list[str]:
    return [item["content"] for item in request.input_items if item.get("role") == "user"]


async def delete_thread(harness: Harness, ts: str) -> None:
    [first, *_] = harness.slack.thread(CHANNEL, ts)
    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=first.ts)
    await harness.settle()


@pytest.fixture
def llama() -> Any:
    with FakeResponses(server="llama.cpp") as fake:
        yield fake
        assert fake.problems == []


async def test_a_llama_cpp_server_answers_a_question_and_its_follow_up_learning_once_that_it_keeps_nothing(
    slack: FakeSlack, llama: FakeResponses, redis_url: str, corpus_index: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The default FOLIO_MODEL_STATE (auto): the first refusal switches Folio to resending, unseen by the asker.
    script_two_turns(llama)
    llama.script(tools(search("network")), reply("In a second thread too [S1]."))
    caplog.set_level(logging.WARNING)
    async with folio_on(slack, llama, redis_url, corpus_index, openai_api_key="not-needed",
                        openai_base_url=llama.base_url) as harness:  # fmt: skip
        ts = await harness.mention(QUESTION)
        await harness.settle()
        await harness.message(FOLLOW_UP, thread_ts=ts)
        await harness.settle()
        other = await harness.mention("Is balance billing covered in network?")
        await harness.settle()
        texts, other_texts = harness.texts(ts), harness.texts(other)

    assert llama.refused == [LLAMA_NO_PREVIOUS]  # learned once, for the process: the second thread never asks again
    assert "protected from balance billing" in texts[0] and "out of network too" in texts[1]
    assert "In a second thread too" in other_texts[0]
    assert all("previous_response_id" not in request.body for request in llama.requests)
    follow_up = llama.requests[2]  # the search, the resent call that answered, then the follow-up's first call
    assert user_texts(follow_up) == [QUESTION, FOLLOW_UP]  # the model sees the earlier turn ...
    kinds = [item.get("type") for item in follow_up.input_items]
    assert kinds.count("function_call") == 1 and kinds.count("function_call_output") == 1  # ... and its tool round
    [earlier_answer] = [item for item in follow_up.input_items if item.get("type") == "message"]
    assert earlier_answer["content"][0]["text"] == "You are protected from balance billing [S1]."
    assert any("keeps no responses" in record.getMessage() for record in caplog.records)
