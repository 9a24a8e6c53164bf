"""The `access:` section: its shape, its mistakes named by file and line, and rules that never widen a scope."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.access import grant_for, prompts_for
from bot.config import ChannelPolicy, load_policy
from bot.errors import ConfigurationError, NotConnected
from bot.models import Scope
from bot.retrieval.filters import scope_filter
from bot.retrieval.local import LocalRetriever
from tests.fakes.odata import compile_filter
from tests.retrieval.helpers import chunk

ROOT = Path(__file__).resolve().parents[2]
ACCESS = """\
access:
  groups:                      # Slack user group handle or ID -> containers that group's members may search
    finance-team: [finance]
    S0LEGAL01: [legal, finance]
  users:                       # Slack user ID -> containers, added to what their groups give
    U0CFO0001: [board]
  default: [handbook]          # everyone else; omit to give others nothing in DMs
"""
FIELDS = {
    "container": {"type": "Edm.String", "filterable": True},
    "file": {"type": "Edm.String", "filterable": True},
    "tags": {"type": "Collection(Edm.String)", "filterable": True},
}
HOSTILE = ["finance' or container ne '", "x|finance", "handbook') or (1 eq 1", "a,b;c~d^e|f", "' or ''='", "*"]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "channels.yaml"
    path.write_text(text)
    return path


def test_a_persons_containers_are_the_union_of_their_groups_their_own_and_the_default(tmp_path: Path) -> None:
    rules = load_policy(write(tmp_path, ACCESS)).access
    assert rules is not None

    cfo = grant_for(rules, user="U0CFO0001", groups={"finance-team", "S0LEGAL01"})
    nobody = grant_for(rules, user="U0OTHER01", groups=set())

    assert cfo.containers == ("board", "finance", "handbook", "legal")
    assert cfo.matched == (
        "group finance-team: finance",
        "group S0LEGAL01: legal, finance",
        "user U0CFO0001: board",
        "default: handbook",
    )
    assert nobody.containers == ("handbook",) and nobody.matched == ("default: handbook",)


def test_without_a_default_someone_no_rule_names_searches_nothing(tmp_path: Path) -> None:
    rules = load_policy(write(tmp_path, "access:\n  groups:\n    finance-team: [finance]\n")).access
    assert rules is not None
    grant = grant_for(rules, user="U0OTHER01", groups=())
    with pytest.raises(NotConnected, match="access:"):
        grant.scope()


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("access:\n  groups:\n    Finance Team: [finance]\n", 3, "not a Slack user group handle"),
        ('access:\n  groups:\n    "finance-team\' or 1 eq 1": [finance]\n', 3, "not a Slack user group handle"),
        ("access:\n  users:\n    alice: [board]\n", 3, "not a Slack user ID"),
        ("access:\n  users:\n    \"U0ALICE01' or '1'='1\": [board]\n", 3, "not a Slack user ID"),
        ("access:\n  groups:\n    finance-team: []\n", 3, "one or more containers"),
        ("access:\n  groups:\n    finance-team: finance\n", 3, "one or more containers"),
        ("access:\n  default: [handbook, '  ']\n", 2, "not a container name"),
        ("access:\n  defaults: [handbook]\n", 2, "defaults"),
        ("dm:\n  container: handbook\naccess:\n  default: [handbook]\n", 3, "remove the dm entry"),
        ("prompts:\n  finance:\n    - title: Refunds\n", 3, "message"),
        ("access:\n  default: [handbook,\n    !secret finance]\n", 3, "!secret"),  # was a yaml traceback, no file
        ("access:\n  users:\n    U0CFO0001: [!!int board]\n", 3, "cannot read 'board'"),  # was a ValueError
        ("access:\n  default: [!!bool maybe]\n", 2, "cannot read 'maybe'"),  # was a KeyError
    ],
)
def test_access_mistakes_name_the_line(tmp_path: Path, text: str, line: int, says: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigurationError) as error:
        load_policy(path)
    assert f"{path} line {line}:" in str(error.value) and says in str(error.value)


def test_the_shipped_example_shows_an_access_policy() -> None:
    policy = load_policy(ROOT / "channels.example.yaml")
    assert policy.access is not None and policy.access.default


def test_prompts_come_from_the_policy_per_container_else_a_plain_question() -> None:
    policy = ChannelPolicy.model_validate({"prompts": {"finance": [{"title": "Refunds", "message": "Refund window?"}]}})
    chosen = prompts_for(policy, ["finance", "board", "legal", "ops", "hr"])
    assert [prompt.title for prompt in chosen] == ["Refunds", "About board", "About legal", "About ops"]  # Slack: 4


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_container_name_in_the_policy_filters_only_itself_in_odata(name: str) -> None:
    policy = ChannelPolicy.model_validate({"access": {"default": [name, "handbook"]}})
    assert policy.access is not None
    scope = grant_for(policy.access, user="U0ALICE01", groups=()).scope()
    documents = [{"container": c, "file": f"{c}.pdf", "tags": []} for c in (name, "handbook", "finance", "legal", "")]

    keep = compile_filter(scope_filter(scope), FIELDS)

    assert sorted(doc["container"] for doc in documents if keep(doc)) == sorted([name, "handbook"])


@pytest.mark.parametrize("name", HOSTILE)
async def test_a_hostile_container_name_in_the_policy_filters_only_itself_in_the_local_index(
    tmp_path: Path, name: str
) -> None:
    index = LocalRetriever(tmp_path / "index.sqlite", score_gap=0.0)
    for number, container in enumerate((name, "handbook", "finance", "legal")):
        passage = chunk(container, "a.pdf", f"the refund window of plan {number} is thirty days")
        await index.replace_file(container, "a.pdf", "v", [passage])
    try:
        found = await index.search("refund window", Scope(containers=(name, "handbook")), top=10)
    finally:
        await index.close()
    assert sorted(hit.container for hit in found) == sorted([name, "handbook"])


def test_aliases_that_expand_a_small_file_into_millions_of_entries_are_refused_at_once(tmp_path: Path) -> None:
    """A 600-byte file of nested YAML aliases ("billion laughs") held start-up (and `folio doctor`) at full CPU with
    memory climbing, for ever; it is refused, naming the file and the line where the expansion ran away."""
    groups = ["    g0: &g0 [a, a, a, a, a, a, a, a, a, a]"]
    groups += [f"    g{n}: &g{n} [" + ", ".join([f"*g{n - 1}"] * 10) + "]" for n in range(1, 9)]
    path = write(tmp_path, "access:\n  groups:\n" + "\n".join(groups) + "\n")

    with pytest.raises(ConfigurationError) as error:
        load_policy(path)

    assert f"{path} line " in str(error.value) and "aliases" in str(error.value)
