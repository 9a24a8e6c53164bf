"""The model service's refusals name their cause in the thread; only outages fall back to quoted passages.

Seen while testing: a 401 (a bad key) was treated as an outage, so every question got quoted passages for ever and
nobody learned that the key was wrong.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot import messages
from tests.fakes.openai_responses import FakeResponses, error, reply, search, stopped, tools
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import Harness

QUESTION = "What protection is there against balance billing?"
CONFIG_LOG = "bot.agent.provider_errors"


def operator_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == CONFIG_LOG]


async def test_a_refused_key_says_folio_is_misconfigured_and_logs_the_setting_once(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    harness.model.api_key = "sk-rotated"  # the key Folio holds was revoked at the provider
    caplog.set_level(logging.INFO)

    first = await harness.mention(QUESTION)
    second = await harness.mention("And for out-of-network care?")
    await harness.settle()

    for thread in (first, second):
        assert harness.texts(thread) == [messages.MODEL_MISCONFIGURED]  # no quoted passages passed off as an answer
    [line] = operator_lines(caplog)  # once a minute, not once a turn
    assert "OPENAI_API_KEY" in line and "401" in line and "sk-fake" not in line


@pytest.mark.parametrize(
    ("refusal", "setting"),
    [("models", "FOLIO_MODEL_FAST"), ("reasoning", "FOLIO_REASONING")],
)
async def test_a_model_the_service_lacks_or_a_switch_it_refuses_names_the_setting(
    harness: Harness, caplog: pytest.LogCaptureFixture, refusal: str, setting: str
) -> None:
    if refusal == "models":
        harness.model.models = {"gpt-5"}  # FOLIO_MODEL_FAST is gpt-5-mini
    else:
        harness.model.reasoning = False

    ts = await harness.mention(QUESTION)
    await harness.settle()

    assert harness.texts(ts) == [messages.MODEL_MISCONFIGURED]
    [line] = operator_lines(caplog)
    assert f"model configuration: {setting}:" in line


async def test_a_used_up_quota_says_so(harness: Harness, caplog: pytest.LogCaptureFixture) -> None:
    quota = "You exceeded your current quota, please check your plan and billing details."
    harness.model.script(error(429, "insufficient_quota", kind="insufficient_quota", message=quota))

    ts = await harness.mention(QUESTION)
    await harness.settle()

    assert harness.texts(ts) == [messages.MODEL_QUOTA]
    assert "quota is used up" in operator_lines(caplog)[0]


async def test_a_rate_limit_says_so_instead_of_quoting_passages(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    harness.model.script(error(429, "rate_limit_exceeded", message="Rate limit reached for requests."))

    ts = await harness.mention(QUESTION)
    await harness.settle()

    assert harness.texts(ts) == [messages.MODEL_RATE_LIMITED]  # not an outage: no quoted passages hide it
    assert "rate-limiting Folio" in operator_lines(caplog)[0]


async def test_a_content_filter_refusal_says_so(harness: Harness) -> None:
    filtered = (
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
        "Please modify your prompt and retry."
    )
    harness.model.script(error(400, "content_filter", kind="invalid_request_error", param="prompt", message=filtered))
    harness.model.script(tools(search("balance billing")), stopped("content_filter"))

    asked, answered = await harness.mention(QUESTION), await harness.mention("Once more, please.")
    await harness.settle()

    assert harness.texts(asked) == [messages.CONTENT_FILTERED]  # the question was refused
    assert harness.texts(answered) == [messages.CONTENT_FILTERED]  # the answer was stopped half-way


async def test_a_thread_too_long_for_the_model_is_trimmed_and_answered(harness: Harness) -> None:
    too_long = "Your input exceeds the context window of this model. Please adjust your input and try again."
    harness.model.script(tools(search("balance billing")), reply("Protected in network [S1]."))
    ts = await harness.mention(QUESTION)
    await harness.settle()
    harness.model.script(
        error(400, "context_length_exceeded", kind="invalid_request_error", param="input", message=too_long),
        tools(search("out of network")),
        reply("Also protected out of network [S2]."),
    )

    await harness.mention("And out of network?", thread_ts=ts)
    await harness.settle()

    answer = harness.texts(ts)[-1]
    assert messages.HISTORY_TRIMMED in answer and "Also protected out of network" in answer
    refused, retried = harness.model.requests[-3:-1]
    assert refused.body["previous_response_id"]  # chained to the first answer: the service's copy was too long
    assert "previous_response_id" not in retried.body and retried.user_text == "And out of network?"


async def test_a_thread_still_too_long_after_trimming_says_to_start_afresh(harness: Harness) -> None:
    too_long = error(
        400,
        "context_length_exceeded",
        kind="invalid_request_error",
        param="input",
        message="Your input exceeds the context window of this model.",
    )
    harness.model.script(too_long, too_long)

    ts = await harness.mention(QUESTION)
    await harness.settle()

    assert harness.texts(ts) == [messages.CONTEXT_TOO_LONG]
    assert len(harness.model.requests) == 2  # retried exactly once


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_base_url_that_is_not_the_responses_api_is_a_misconfiguration_not_an_outage(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    caplog: pytest.LogCaptureFixture,
    streaming: bool,
) -> None:
    fake_model.web_page = True  # OPENAI_BASE_URL names a web server (200, HTML), not the API
    caplog.set_level(logging.INFO)
    async with running_app(slack, fake_model, redis_url, corpus_index, streaming=streaming) as harness:
        ts = await harness.mention(QUESTION)
        await harness.settle()

        assert harness.texts(ts) == [messages.MODEL_MISCONFIGURED]  # not quoted passages, as for an outage
    [line] = operator_lines(caplog)
    assert "OPENAI_BASE_URL" in line and "not a Responses API" in line


async def test_an_outage_still_falls_back_to_quoted_passages(harness: Harness) -> None:
    harness.model.script(error(503))  # one call: an outage is not retried, the turn quotes passages at once

    ts = await harness.mention(QUESTION)
    await harness.settle()

    [answer] = harness.texts(ts)
    assert messages.MODEL_DOWN in answer and "<https://docs.example/" in answer
