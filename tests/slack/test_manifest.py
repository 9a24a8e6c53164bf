"""manifest.yaml installs what the app uses, and validates against Slack's published manifest schema."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import jsonschema
import yaml
from referencing import Registry, Resource

from tests.conftest import ROOT

SCHEMA_BASE = "https://raw.githubusercontent.com/slackapi/manifest-schema/v0.5.0/schemas/"


def load_manifest() -> dict:
    return yaml.safe_load((ROOT / "manifest.yaml").read_text())


def test_the_manifest_validates_against_slacks_schema(shared_dir: Path) -> None:
    specs = shared_dir / "specs" / "slack"
    registry = Registry().with_resources(
        (SCHEMA_BASE + name, Resource.from_contents(json.loads((specs / name).read_text())))
        for name in ("manifest.schema.1.0.0.json", "manifest.schema.2.0.0.json")
    )
    schema = json.loads((specs / "manifest.schema.json").read_text())

    errors = [
        error.message for error in jsonschema.Draft7Validator(schema, registry=registry).iter_errors(load_manifest())
    ]
    assert errors == []


def test_the_manifest_subscribes_to_what_the_listeners_handle() -> None:
    manifest = load_manifest()
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])

    assert events == {
        "app_mention",
        "message.channels",
        "message.groups",
        "message.im",
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "app_home_opened",
        "app_context_changed",
        "subteam_members_changed",
        "subteam_updated",
        "channel_shared",
        "channel_unshared",
    }
    assert {"app_mentions:read", "chat:write", "commands", "im:history", "channels:history", "users:read"} <= scopes
    assert {"assistant:write", "usergroups:read", "channels:read", "groups:read"} <= scopes
    assert [command["command"] for command in manifest["features"]["slash_commands"]] == ["/ask"]
    assert manifest["settings"]["interactivity"]["is_enabled"] and manifest["settings"]["socket_mode_enabled"]


def test_a_broken_manifest_is_caught(shared_dir: Path) -> None:
    manifest = load_manifest()
    manifest["features"]["slash_commands"][0]["command"] = "ask"  # must start with /
    specs = shared_dir / "specs" / "slack"
    schema = json.loads((specs / "manifest.schema.1.0.0.json").read_text())
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(manifest))
    assert errors


def test_the_view_feature_is_slacks_current_one_within_its_limits(shared_dir: Path) -> None:
    view = load_manifest()["features"]["agent_view"]
    specs = shared_dir / "specs" / "slack"
    for name in ("manifest.schema.1.0.0.json", "manifest.schema.2.0.0.json"):
        definition = json.loads((specs / name).read_text())["definitions"]["app-manifests.v1.features.agent_view"]
        jsonschema.Draft7Validator(definition).validate(view)
    assert 1 <= len(view["suggested_prompts"]) <= 4 and len(view["agent_description"]) <= 300
    assert "assistant_view" not in load_manifest()["features"]  # one experience per app


def test_every_subscribed_event_has_a_listener() -> None:
    from bot.slack.listeners import assistant, messages, shared, subteams

    sources = "".join(inspect.getsource(module) for module in (messages, assistant, subteams, shared))
    handled = set(re.findall(r'@app\.event\("([a-z_]+)"\)', sources))
    subscribed = {event.split(".")[0] for event in load_manifest()["settings"]["event_subscriptions"]["bot_events"]}
    assert subscribed == handled  # message.im and its kin arrive as `message`
