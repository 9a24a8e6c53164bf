"""Settings come from the environment and .env; a wrong value names the variable, never a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import load_settings
from bot.errors import ConfigurationError


def test_defaults_need_no_account() -> None:
    settings = load_settings(None)
    assert not settings.model_configured
    assert not settings.slack_configured
    assert settings.redis_url is None
    assert settings.folio_data_dir == Path(".folio")
    assert settings.slack_api_url == "https://slack.com/api/"


def test_environment_overrides_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / ".env"
    env.write_text("FOLIO_MAX_ITERATIONS=4\nOPENAI_API_KEY=sk-from-file\nFOLIO_SEARCH_TOP=3\n")
    monkeypatch.setenv("FOLIO_SEARCH_TOP", "9")
    settings = load_settings(env)
    assert settings.folio_max_iterations == 4
    assert settings.folio_search_top == 9
    assert settings.model_configured
    assert settings.openai_api_key is not None and settings.openai_api_key.get_secret_value() == "sk-from-file"


def test_thorough_model_defaults_to_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLIO_MODEL_FAST", "gpt-small")
    assert load_settings(None).thorough_model == "gpt-small"
    monkeypatch.setenv("FOLIO_MODEL_THOROUGH", "gpt-large")
    assert load_settings(None).thorough_model == "gpt-large"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("FOLIO_MAX_ITERATIONS", "lots", "FOLIO_MAX_ITERATIONS"),
        ("FOLIO_MAX_ITERATIONS", "0", "greater than or equal to 1"),
        ("PORT", "99999", "PORT"),
        ("FOLIO_SCORE_GAP", "2", "FOLIO_SCORE_GAP"),
        ("FOLIO_EFFORT_FAST", "extreme", "FOLIO_EFFORT_FAST"),
        ("FOLIO_CODE_INTERPRETER", "perhaps", "FOLIO_CODE_INTERPRETER"),
    ],
)
def test_wrong_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError) as error:
        load_settings(None)
    message = str(error.value)
    assert expected in message
    assert "Fix it in the environment or in .env" in message


def test_malformed_dotenv_value_is_named(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("FOLIO_CHUNK_BUDGET=twenty\n")
    with pytest.raises(ConfigurationError, match="FOLIO_CHUNK_BUDGET"):
        load_settings(env)


def test_error_never_echoes_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLIO_MAX_ITERATIONS", "nope")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-very-secret")
    with pytest.raises(ConfigurationError) as error:
        load_settings(None)
    assert "xoxb-very-secret" not in str(error.value)


def test_settings_repr_hides_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hidden-value")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "signing-hidden")
    shown = repr(load_settings(None))
    assert "sk-hidden-value" not in shown
    assert "signing-hidden" not in shown
