"""The channel policy file decides what each channel may search; mistakes are reported with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import load_policy, narrow
from bot.config.policy_file import REMIND_EVERY, PolicyFile
from bot.errors import ConfigurationError, InvalidInput, NotConnected
from bot.models import Scope, Tag

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
tag_keys: [department, year]
channels:
  C0FINANCE1:
    container: finance
    tags: [department:finance]
  C0OPEN0001:
    container: handbook
dm:
  container: handbook
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "channels.yaml"
    path.write_text(text)
    return path


def test_channel_scope_comes_from_the_policy(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, GOOD))
    scope = policy.scope_for("C0FINANCE1")
    assert scope == Scope(container="finance", tags=(Tag(key="department", value="finance"),))
    assert policy.scope_for("D0DIRECT01", is_dm=True).containers == ("handbook",)


def test_unlisted_channel_without_default_is_not_connected(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, GOOD))
    with pytest.raises(NotConnected, match="C0OTHER001"):
        policy.scope_for("C0OTHER001")


def test_default_serves_unlisted_channels(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, GOOD + "default:\n  container: public\n"))
    assert policy.scope_for("C0OTHER001").containers == ("public",)


def test_dms_refused_without_dm_rule(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, "channels:\n  C0FINANCE1:\n    container: finance\n"))
    with pytest.raises(NotConnected, match="Direct messages"):
        policy.scope_for("D0DIRECT01", is_dm=True)


def test_filters_narrow_but_never_widen(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, GOOD))
    year = Tag(key="year", value="2025")
    narrowed = policy.scope_for("C0FINANCE1", tags=(year,))
    assert narrowed.containers == ("finance",)
    assert set(narrowed.tags) == {Tag(key="department", value="finance"), year}
    with pytest.raises(InvalidInput, match="only searches department:finance"):
        policy.scope_for("C0FINANCE1", tags=(Tag(key="department", value="legal"),))
    with pytest.raises(InvalidInput, match="not a filter here"):
        policy.scope_for("C0FINANCE1", tags=(Tag(key="container", value="legal"),))


def test_narrow_replaces_only_the_narrowed_key() -> None:
    scope = Scope(container="c", tags=(Tag(key="year", value="2025"), Tag(key="year", value="2026")))
    narrowed = narrow(scope, (Tag(key="year", value="2026"),), allowed_keys=("year",))
    assert narrowed.tags == (Tag(key="year", value="2026"),)


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("channels:\n  C0FINANCE1:\n    container: ''\n", 3, "container must not be empty"),
        ("channels:\n  C0FINANCE1:\n    tags: []\n", 2, "container"),
        ("channels:\n  C0FINANCE1:\n    container: a\n  C0FINANCE1:\n    container: b\n", 4, "appears twice"),
        ("tag_keys: [year]\nchannels:\n  C0FINANCE1:\n    container: a\n    colour: red\n", 5, "colour"),
        ("chanels:\n  C0FINANCE1:\n    container: a\n", 1, "chanels"),
        ("channels:\n  general:\n    container: a\n", 1, "not a Slack channel ID"),
        ("tag_keys: [year]\nchannels:\n  C0FINANCE1:\n    container: a\n    tags: [region:eu]\n", 1, "region"),
        ("channels:\n  C0FINANCE1:\n    container: a\n    tags: [nocolon]\n", 4, "key:value"),
    ],
)
def test_mistakes_name_the_line(tmp_path: Path, text: str, line: int, says: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigurationError) as error:
        load_policy(path)
    message = str(error.value)
    assert f"{path} line {line}:" in message
    assert says in message


def test_invalid_yaml_and_missing_file_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="not valid YAML"):
        load_policy(write(tmp_path, "channels: [unclosed\n"))
    with pytest.raises(ConfigurationError, match="channels.example.yaml"):
        load_policy(tmp_path / "missing.yaml")


def test_shipped_example_is_valid() -> None:
    policy = load_policy(ROOT / "channels.example.yaml")
    assert policy.tag_keys == ("department", "year", "doc_type")
    assert policy.scope_for("C0FINANCE1").containers == ("sample",)


NESTED = "channels:\n  C0FINANCE1:\n    container: " + "[" * 3000 + "]" * 3000 + "\n"  # 6 KB, 3,000 levels


def test_a_deeply_nested_file_names_its_file_and_line_instead_of_a_recursion_error(tmp_path: Path) -> None:
    # Issue 18, item 4: RecursionError escaped the loader: `folio serve` died with a traceback.
    path = write(tmp_path, NESTED)

    with pytest.raises(ConfigurationError) as error:
        load_policy(path)

    assert str(error.value).startswith(f"{path} line 3: ") and "nested" in str(error.value)


def test_a_live_re_read_of_a_broken_file_keeps_the_policy_and_keeps_saying_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path, GOOD)
    now = [0.0]
    policy_file = PolicyFile(path, clock=lambda: now[0])
    before = policy_file.current()

    path.write_text(NESTED)
    assert policy_file.current() is before  # the turn goes on under the policy in force
    now[0] += REMIND_EVERY + 1
    assert policy_file.current() is before
    now[0] += 1
    assert policy_file.current() is before

    said = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert len(said) == 2 and all(f"{path} line 3:" in line for line in said)  # again while broken, not every turn
    path.write_text(GOOD.replace("finance\n", "money\n"))
    assert policy_file.current().scope_for("C0FINANCE1").containers == ("money",)
