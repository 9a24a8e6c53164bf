"""Fixtures for the agent: the fake Responses server, a real AsyncOpenAI client, and a scripted retriever."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from openai import AsyncOpenAI

from bot.agent import AgentOptions
from bot.models import Conversation
from tests.agent.doubles import SCOPE, link
from tests.fakes.openai_responses import FakeResponses


@pytest.fixture
def fake_model() -> Iterator[FakeResponses]:
    """The fake Responses server; a test fails if any request broke the OpenAPI schema or went unscripted."""
    with FakeResponses() as fake:
        yield fake
        assert fake.problems == []


@pytest.fixture
async def model(fake_model: FakeResponses) -> AsyncIterator[AsyncOpenAI]:
    client = fake_model.client()
    yield client
    await client.close()


@pytest.fixture
def options() -> AgentOptions:
    return AgentOptions(model_fast="gpt-5-mini", model_thorough="gpt-5", link_for=link)


@pytest.fixture
def conversation() -> Conversation:
    return Conversation(scope=SCOPE)
