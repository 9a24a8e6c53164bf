"""REDIS_CLUSTER against what REDIS_URL really is: `folio serve` and `folio doctor` say which mode they use, and name
REDIS_CLUSTER when it does not match the server (a plain client on a cluster node answers PING, then MOVED)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from tests.fakes.slack_api import FakeSlack
from tests.ops.test_startup import one_line, write_env
from tests.redis_cluster import ThreeNodeCluster
from tests.redis_process import RedisProcess

pytestmark = pytest.mark.slow  # a three-node cluster and a plain redis-server

IS_A_CLUSTER = (
    "REDIS_URL is a node of a Redis Cluster (it answered MOVED: the key lives on another node). Set "
    "REDIS_CLUSTER=true, so that Folio uses a cluster client."
)
IS_NOT_A_CLUSTER = (
    "REDIS_CLUSTER=true, but the Redis at REDIS_URL is not a cluster (cluster mode is not enabled on it). Set "
    "REDIS_CLUSTER=false, or point REDIS_URL at a node of the cluster."
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreeNodeCluster]:
    with ThreeNodeCluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisProcess]:
    with RedisProcess(tmp_path_factory.mktemp("plain")) as running:
        yield running


@pytest.fixture
def slack_env(tmp_path: Path, slack: FakeSlack) -> dict[str, str]:
    (tmp_path / "data").mkdir(mode=0o700)
    return {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_API_URL": slack.base_url,
        "SLACK_SIGNING_SECRET": "a-signing-secret",
        "FOLIO_DATA_DIR": str(tmp_path / "data"),
    }


def test_serve_on_a_cluster_node_without_redis_cluster_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str], cluster: ThreeNodeCluster
) -> None:
    write_env(tmp_path, **slack_env, REDIS_URL=cluster.url)

    assert main(["serve"]) == 2

    assert one_line(capsys) == f"folio: {IS_A_CLUSTER}"


def test_serve_with_redis_cluster_on_a_plain_redis_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str], plain: RedisProcess
) -> None:
    write_env(tmp_path, **slack_env, REDIS_URL=f"redis://127.0.0.1:{plain.port}", REDIS_CLUSTER="true")

    assert main(["serve"]) == 2

    assert one_line(capsys) == f"folio: {IS_NOT_A_CLUSTER}"


def doctor_redis(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    main(["doctor", "--json"])
    [redis] = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["part"] == "redis"]
    return redis


def test_doctor_says_the_mode_and_names_redis_cluster_when_it_does_not_match(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cluster: ThreeNodeCluster,
    plain: RedisProcess,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOLIO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REDIS_URL", cluster.url)

    missing = doctor_redis(capsys)
    monkeypatch.setenv("REDIS_CLUSTER", "true")
    clustered = doctor_redis(capsys)
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{plain.port}")
    wrong = doctor_redis(capsys)

    assert (missing["status"], missing["summary"]) == ("fail", f"REDIS_URL {cluster.url}: {IS_A_CLUSTER}")
    assert clustered["status"] == "ok" and clustered["summary"].startswith(f"REDIS_URL {cluster.url} (cluster) answers")
    assert (wrong["status"], wrong["summary"]) == (
        "fail",
        f"REDIS_URL redis://127.0.0.1:{plain.port} (cluster): {IS_NOT_A_CLUSTER}",
    )


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["one process", "workers"])
def test_redis_cluster_without_redis_url_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: dict[str, str], workers: list[str]
) -> None:
    write_env(tmp_path, **slack_env, REDIS_CLUSTER="true")

    assert main(["serve", *workers]) == 2

    assert one_line(capsys) == (
        "folio: REDIS_CLUSTER=true needs REDIS_URL: the embedded Redis is a single server. Set REDIS_URL to a node of "
        "the cluster (redis://HOST:6379 or rediss://HOST:6380), or REDIS_CLUSTER=false."
    )
