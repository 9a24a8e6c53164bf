"""The Slack and model fakes of tests/slack, for the operations tests (doctor, health, metrics, logs, start-up)."""

from tests.slack.conftest import fake_model, harness, slack

__all__ = ["fake_model", "harness", "slack"]
