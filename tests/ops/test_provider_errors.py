"""How each answer of the model service is classified: what the thread says, and which setting the log names."""

from __future__ import annotations

import pytest

from bot.agent.provider_errors import Call, Failure, classify
from bot.errors import (
    ContentFiltered,
    ContextTooLong,
    HistoryExpired,
    ModelMisconfigured,
    ModelRefused,
    ModelUnavailable,
    QuotaExceeded,
    RateLimited,
)

FAST, THOROUGH = Call(model="gpt-5-mini", profile="fast"), Call(model="gpt-5", profile="thorough")
AZURE = Call(model="folio-gpt", profile="fast", azure=True)
CHAINED = Call(model="gpt-5-mini", profile="fast", chained=True)


@pytest.mark.parametrize(
    ("failure", "call", "kind", "setting"),
    [
        (Failure(401, "invalid_api_key"), FAST, ModelMisconfigured, "OPENAI_API_KEY"),
        (
            Failure(401, "401", message="Access denied due to invalid subscription key"),
            AZURE,
            ModelMisconfigured,
            "AZURE_OPENAI_API_KEY",
        ),
        (Failure(403, "", message="Principal does not have access"), AZURE, ModelMisconfigured, "AZURE_OPENAI_API_KEY"),
        (
            Failure(400, "model_not_found", "model", message="The requested model 'x' does not exist."),
            THOROUGH,
            ModelMisconfigured,
            "FOLIO_MODEL_THOROUGH",
        ),
        (
            Failure(404, "DeploymentNotFound", message="The API deployment for this resource does not exist."),
            AZURE,
            ModelMisconfigured,
            "FOLIO_MODEL_FAST",
        ),
        (
            Failure(404, "DeploymentNotFound"),
            Call(model="m", profile="fast", chained=True),
            ModelMisconfigured,
            "FOLIO_MODEL_FAST",
        ),  # chained, yet the deployment is what is missing
        (Failure(400, "unsupported_parameter", "reasoning.effort"), FAST, ModelMisconfigured, "FOLIO_REASONING"),
        (
            Failure(400, "unsupported_value", "tools", message="Tool 'code_interpreter' is not supported."),
            FAST,
            ModelMisconfigured,
            "FOLIO_CODE_INTERPRETER",
        ),
        (Failure(400, "previous_response_not_found", "previous_response_id"), CHAINED, HistoryExpired, None),
        (Failure(404, "", message="Not found"), CHAINED, HistoryExpired, None),  # a proxy's way of saying it
        (Failure(429, "insufficient_quota", kind="insufficient_quota"), FAST, QuotaExceeded, None),
        (
            Failure(400, "content_filter", "prompt", message="... content management policy ..."),
            AZURE,
            ContentFiltered,
            None,
        ),
        (Failure(400, "context_length_exceeded", "input"), FAST, ContextTooLong, None),
        (Failure(429, "rate_limit_exceeded"), FAST, RateLimited, None),  # not an outage: no quoted passages
        (Failure(500, "server_error"), FAST, ModelUnavailable, None),
        (Failure(None, message="Request timed out."), FAST, ModelUnavailable, None),
        (Failure(422, "invalid_value", "input"), FAST, ModelRefused, None),
    ],
)
def test_each_refusal_becomes_the_error_that_names_its_cause(
    failure: Failure, call: Call, kind: type, setting: str | None
) -> None:
    error = classify(failure, call)

    assert type(error) is kind
    if setting is not None:
        assert isinstance(error, ModelMisconfigured) and error.setting == setting and setting in error.fix
