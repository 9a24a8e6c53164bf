"""Your own model server (issue 23, finding 8): a llama.cpp-style server that keeps no responses, and Azure OpenAI,
each driven through Slack with the settings docs/configuration.md "Use your own model server" gives.

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

from bot import messages
from bot.slack.render import ACTION_DELETE
from tests.fakes.model_servers import LLAMA_NO_PREVIOUS
from tests.fakes.openai_responses import FakeResponses, Request, error, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import CHANNEL, Harness

RECIPES = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"  # "Use your own model server"
QUESTION = "What protection is there against balance billing?"
FOLLOW_UP = "Does that hold out of network?"


def recipe(title: str, **urls: str) -> dict[str, Any]:
    """The settings of the documented recipe under `title` (its first ```sh block), with its example URLs replaced by the
    fakes' (`{"http://localhost:8080": fake.endpoint}`), as Settings keywords."""
    text = RECIPES.read_text(encoding="utf-8")
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


async def asked_once(
    slack: FakeSlack, fake: FakeResponses, redis_url: str, corpus_index: Path, **settings: Any
) -> list[str]:
    """The thread's texts once QUESTION, asked once in a channel of Folio built from `settings`, has settled."""
    async with folio_on(slack, fake, redis_url, corpus_index, **settings) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        return harness.texts(ts)


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]


def script_two_turns(fake: FakeResponses) -> None:
    fake.script(
        tools(search("balance billing protection")),
        reply("You are protected from balance billing [S1]."),
        tools(search("balance billing out of network")),
        reply("Yes, out of network too [S1]."),
    )


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
    async with folio_on(
        slack, llama, redis_url, corpus_index, openai_api_key="not-needed", openai_base_url=llama.base_url
    ) as harness:
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


async def test_deleting_a_thread_whose_first_response_auto_made_before_learning_claims_none_stored_by_the_server(
    slack: FakeSlack, llama: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    # Auto mode: the thread's first call went out before Folio learned llama-server keeps nothing, so its id was
    # recorded; llama-server has no such response (DELETE answers 404), so none was deleted there.
    llama.script(tools(search("balance billing protection")), reply("You are protected from balance billing [S1]."))
    async with folio_on(
        slack, llama, redis_url, corpus_index, openai_api_key="not-needed", openai_base_url=llama.base_url
    ) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        conversation = await harness.store.load(harness.thread_key(ts))
        await delete_thread(harness, ts)
        gone = not await harness.store.exists(harness.thread_key(ts))

    assert llama.refused == [LLAMA_NO_PREVIOUS] and conversation is not None and len(conversation.response_ids) == 1
    assert gone and harness.texts(ts) == []
    assert harness.ephemeral() == [
        "Deleted: 1 message of mine in this thread, no responses stored by the model service, and my record of this "
        "conversation."
    ]


async def test_the_llama_cpp_recipe_streams_answers_and_follow_ups_and_deletes_with_nothing_to_delete_there(
    slack: FakeSlack, llama: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    settings = recipe("**llama.cpp's `llama-server`**", **{"http://localhost:8080": llama.endpoint})
    assert settings["folio_model_state"] == "client" and settings["folio_code_interpreter"] == "false"
    script_two_turns(llama)
    async with folio_on(slack, llama, redis_url, corpus_index, streaming=True, **settings) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()
        await harness.message(FOLLOW_UP, thread_ts=ts)
        await harness.settle()
        texts = harness.texts(ts)
        conversation = await harness.store.load(harness.thread_key(ts))
        await delete_thread(harness, ts)
        gone = not await harness.store.exists(harness.thread_key(ts))

    assert llama.refused == []  # client mode from the start: previous_response_id is never sent
    assert "protected from balance billing" in texts[0] and "out of network too" in texts[-1]
    assert all(request.body.get("store") is False and request.body.get("stream") for request in llama.requests)
    assert user_texts(llama.requests[2]) == [QUESTION, FOLLOW_UP]
    assert conversation is not None and len(conversation.model_items) == 2 and conversation.response_ids == []
    assert gone and harness.texts(ts) == []
    assert harness.ephemeral() == [messages.deleted(messages=len(conversation.message_ts), responses=0)]


async def test_the_azure_openai_recipe_chains_follow_ups_and_deletes_the_responses_azure_stored(
    slack: FakeSlack, redis_url: str, corpus_index: Path
) -> None:
    with FakeResponses(server="azure", api_key="your-key", models={"gpt-5-mini", "gpt-5"}) as azure:
        settings = recipe("**Azure OpenAI**", **{"https://NAME.openai.azure.com": azure.endpoint})
        script_two_turns(azure)
        async with folio_on(slack, azure, redis_url, corpus_index, **settings) as harness:
            ts = await harness.mention(QUESTION)
            await harness.settle()
            await harness.message(FOLLOW_UP, thread_ts=ts)
            await harness.settle()
            texts = harness.texts(ts)
            conversation = await harness.store.load(harness.thread_key(ts))
            stored = azure.stored_ids()
            await delete_thread(harness, ts)
        assert azure.problems == []

    assert "protected from balance billing" in texts[0] and "out of network too" in texts[1]
    first_answer, follow_up = azure.requests[1], azure.requests[2]
    assert follow_up.body["previous_response_id"] == first_answer.response_id  # Azure keeps the conversation
    assert user_texts(follow_up) == [FOLLOW_UP] and "store" not in follow_up.body
    assert conversation is not None and conversation.model_items == []  # nothing resent, nothing kept for it
    assert len(stored) == 4 and sorted(azure.deleted) == sorted(stored) and azure.stored_ids() == []
    assert harness.ephemeral() == [messages.deleted(messages=len(conversation.message_ts), responses=4)]


async def test_with_folio_model_state_server_a_server_that_keeps_nothing_is_named_as_misconfigured(
    slack: FakeSlack, llama: FakeResponses, redis_url: str, corpus_index: Path, caplog: pytest.LogCaptureFixture
) -> None:
    llama.script(tools(search("balance billing protection")))
    caplog.set_level(logging.INFO)
    texts = await asked_once(
        slack,
        llama,
        redis_url,
        corpus_index,
        openai_api_key="not-needed",
        openai_base_url=llama.base_url,
        folio_model_state="server",
    )

    assert texts == [messages.MODEL_MISCONFIGURED] and llama.refused == [LLAMA_NO_PREVIOUS]
    logged = errors_logged(caplog)
    assert any("FOLIO_MODEL_STATE" in line and "FOLIO_MODEL_STATE=client" in line for line in logged), logged


async def test_the_code_interpreter_left_on_for_a_llama_cpp_server_names_the_setting_to_turn_off(
    slack: FakeSlack, llama: FakeResponses, redis_url: str, corpus_index: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    texts = await asked_once(
        slack,
        llama,
        redis_url,
        corpus_index,
        openai_api_key="not-needed",
        openai_base_url=llama.base_url,
        folio_code_interpreter=True,
    )

    assert texts == [messages.MODEL_MISCONFIGURED] and llama.refused == ["'type' of tool must be 'function'"]
    logged = errors_logged(caplog)
    assert any("FOLIO_CODE_INTERPRETER" in line and "set FOLIO_CODE_INTERPRETER=false" in line for line in logged)


async def test_a_llama_cpp_server_started_without_jinja_is_named_as_misconfigured_not_as_an_outage(
    slack: FakeSlack, llama: FakeResponses, redis_url: str, corpus_index: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Its HTTP 500 never passes: quoting passages "while the model is down" would hide it for ever.
    without_jinja = error(500, message="tools param requires --jinja flag", kind="server_error")
    llama.script(without_jinja, without_jinja, without_jinja)  # the SDK retries a 500 twice
    caplog.set_level(logging.INFO)
    settings = recipe("**llama.cpp's `llama-server`**", **{"http://localhost:8080": llama.endpoint})
    texts = await asked_once(slack, llama, redis_url, corpus_index, **settings)

    assert texts == [messages.MODEL_MISCONFIGURED]
    logged = errors_logged(caplog)
    assert any("OPENAI_BASE_URL" in line and "start llama-server with --jinja" in line for line in logged), logged


async def test_the_azure_openai_recipe_with_a_deployment_azure_does_not_have_names_folio_model_fast(
    slack: FakeSlack, redis_url: str, corpus_index: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with FakeResponses(server="azure", api_key="your-key", models={"gpt-5-mini-2025"}) as azure:
        settings = recipe("**Azure OpenAI**", **{"https://NAME.openai.azure.com": azure.endpoint})
        texts = await asked_once(slack, azure, redis_url, corpus_index, **settings)

    assert texts == [messages.MODEL_MISCONFIGURED]
    logged = errors_logged(caplog)
    assert any("FOLIO_MODEL_FAST" in line and "AZURE_OPENAI_ENDPOINT" in line for line in logged), logged
