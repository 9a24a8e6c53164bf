"""The Helm chart (deploy/helm/folio) renders with Helm's own engine and every manifest is valid Kubernetes.

Rendered with the defaults and each example value file (helm-python-sdk: Helm's Go SDK, no helm binary), every
manifest validated against the Kubernetes schemas (kubernetes-validate's bundled, offline copies, strict: an unknown
field fails). The Deployment is then read as an operator would check it: probes, grace period, secrets.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import redis.exceptions
import yaml
from helm_python import Chart, HelmRenderError
from helm_python import lint as helm_lint
from redis.asyncio import Redis

from bot.app.redis_client import redis_client
from tests.conftest import ROOT
from tests.redis_process import REDIS_SERVER, listening

CHART = ROOT / "deploy" / "helm" / "folio"
EXAMPLES = sorted((CHART / "examples").glob("*.yaml"))
KUBERNETES = "1.30.0"  # the oldest Kubernetes the chart supports (autoscaling/v2, policy/v1, batch/v1 CronJob)
DRAIN = 30  # seconds `folio serve` lets running turns finish after SIGTERM (bot.app.SHUTDOWN_GRACE)
SECRET_NAMES = (
    "SLACK_BOT_TOKEN",
    "SLACK_SIGNING_SECRET",
    "SLACK_APP_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_SEARCH_KEY",
    "FOLIO_LINK_SECRET",
)


def render(values: dict | None = None) -> list[dict]:
    """Every manifest the chart renders for `values` (merged over values.yaml), as Helm would install them."""
    chart = Chart.load(CHART)
    try:
        files = chart.render(values or {}, name="folio", namespace="folio")
    finally:
        chart.close()
    return [doc for path, text in files.items() if path.endswith(".yaml") for doc in yaml.safe_load_all(text) if doc]


def example(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def by_kind(manifests: list[dict], kind: str) -> list[dict]:
    return [manifest for manifest in manifests if manifest["kind"] == kind]


@pytest.mark.parametrize("values", [None, *EXAMPLES], ids=["defaults", *(path.stem for path in EXAMPLES)])
def test_every_manifest_is_valid_kubernetes(values: Path | None) -> None:
    manifests = render(example(values) if values else None)

    assert {"Deployment", "Service", "ConfigMap", "PodDisruptionBudget"} <= {m["kind"] for m in manifests}
    for manifest in manifests:
        kubernetes_validate.validate(manifest, KUBERNETES, strict=True)  # raises, naming the field, when invalid


def test_the_examples_cover_both_modes_the_autoscaler_both_indexing_kinds_and_both_redis_choices() -> None:
    rendered = [render(example(path)) for path in EXAMPLES]
    kinds = {manifest["kind"] for manifests in rendered for manifest in manifests}
    assert {"HorizontalPodAutoscaler", "CronJob", "StatefulSet"} <= kinds
    components = {m["metadata"]["labels"].get("app.kubernetes.io/component") for ms in rendered for m in ms}
    assert "sync" in components  # the syncer (issue 33) in one example, a nightly `folio index` in the other
    modes = {example(path)["slack"]["mode"] for path in EXAMPLES}
    assert modes == {"http", "socket"}


@pytest.mark.parametrize("values", [None, *EXAMPLES], ids=["defaults", *(path.stem for path in EXAMPLES)])
def test_the_deployment_probes_health_outlasts_the_drain_and_reads_secrets_by_reference(values: Path | None) -> None:
    given = example(values) if values else {}
    manifests = render(given)
    [deployment] = [m for m in by_kind(manifests, "Deployment") if m["metadata"]["name"] == "folio"]  # not the syncer
    pod = deployment["spec"]["template"]["spec"]
    [folio] = pod["containers"]

    assert pod["terminationGracePeriodSeconds"] > DRAIN
    assert folio["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert folio["readinessProbe"]["httpGet"]["path"] == "/readyz"
    ports = {port["name"]: port["containerPort"] for port in folio["ports"]}
    assert ports[folio["readinessProbe"]["httpGet"]["port"]] == 9090  # FOLIO_METRICS_PORT: served in either mode
    secret = given.get("secret", {}).get("existingSecret") or "folio-secrets"
    assert {"secretRef": {"name": secret}} in folio["envFrom"]
    inline = {env["name"]: env.get("value", "") for env in folio.get("env", [])}
    assert not set(SECRET_NAMES) & inline.keys()  # no token or key is written into the Deployment
    # nor a Redis URL with a password: the bundled Redis's is a reference Kubernetes expands from its Secret
    assert all("@" not in value or value.startswith("redis://:$(REDIS_PASSWORD)@") for value in inline.values())
    settings = [m for m in by_kind(manifests, "ConfigMap") if m["metadata"]["name"] == "folio-settings"]
    assert not set(SECRET_NAMES) & settings[0]["data"].keys()
    assert folio["securityContext"]["readOnlyRootFilesystem"] is True and pod["securityContext"]["runAsNonRoot"]
    tokens = [m for m in by_kind(manifests, "Secret") if m["metadata"]["name"] != "folio-redis"]  # Redis's: below
    assert bool(tokens) == (secret == "folio-secrets")  # yours, or the chart's: not both


def test_the_channel_policy_is_mounted_where_folio_reads_it() -> None:
    manifests = render({"channels": "channels:\n  C0HANDBOOK:\n    container: handbook\n"})
    [deployment] = [m for m in by_kind(manifests, "Deployment") if m["metadata"]["name"] == "folio"]  # not the syncer
    pod = deployment["spec"]["template"]["spec"]
    [mount] = [mount for mount in pod["containers"][0]["volumeMounts"] if mount["mountPath"] == "/config"]
    [volume] = [volume for volume in pod["volumes"] if volume["name"] == mount["name"]]
    [policy] = [m for m in by_kind(manifests, "ConfigMap") if m["metadata"]["name"] == volume["configMap"]["name"]]
    settings = [m for m in by_kind(manifests, "ConfigMap") if m["metadata"]["name"] == "folio-settings"][0]["data"]
    assert settings["FOLIO_CHANNELS_FILE"] == "/config/channels.yaml" and settings["FOLIO_SAMPLE_CORPUS"] == "false"
    assert yaml.safe_load(policy["data"]["channels.yaml"]) == {"channels": {"C0HANDBOOK": {"container": "handbook"}}}


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"terminationGracePeriodSeconds": 30}, "terminationGracePeriodSeconds must be above 30"),
        ({"redis": {"bundled": False}}, "put REDIS_URL (redis://:PASSWORD@HOST:6379/0) in secret.values"),
        ({"index": {"enabled": True}}, "index.enabled needs index.documents.existingClaim"),
        ({"data": {"persistence": {"accessModes": ["ReadWriteMany"]}}}, "SQLite on a shared (NFS) volume"),
    ],
)
def test_values_that_would_deploy_something_broken_are_refused_naming_the_value(values: dict, said: str) -> None:
    with pytest.raises(HelmRenderError) as refused:
        render(values)
    assert said in str(refused.value)


@pytest.mark.parametrize("values", [None, *EXAMPLES], ids=["defaults", *(path.stem for path in EXAMPLES)])
def test_helm_lint_finds_nothing_wrong(values: Path | None) -> None:
    linted = helm_lint(CHART, example(values) if values else None, strict=True)
    assert linted["errors"] == []
    assert [m for m in linted["messages"] if m["error"] != "icon is recommended"] == []  # an icon is for catalogues


# --- the bundled Redis: a password from a Secret, and only Folio's pods let in ----------------------------------------
def env_of(container: dict) -> dict[str, dict]:
    return {env["name"]: env for env in container.get("env", [])}


def redis_parts(manifests: list[dict]) -> tuple[dict, dict]:
    """The bundled Redis's StatefulSet and its container."""
    [statefulset] = by_kind(manifests, "StatefulSet")
    [redis] = statefulset["spec"]["template"]["spec"]["containers"]
    return statefulset, redis


def password_ref(env: dict) -> tuple[str, str]:
    ref = env["valueFrom"]["secretKeyRef"]
    return ref["name"], ref["key"]


@pytest.mark.parametrize("values", [None, *EXAMPLES], ids=["defaults", *(path.stem for path in EXAMPLES)])
def test_the_bundled_redis_asks_for_a_password_that_folio_reads_from_a_secret(values: Path | None) -> None:
    given = example(values) if values else {}
    manifests = render(given)
    if not given.get("redis", {}).get("bundled", True):
        assert by_kind(manifests, "StatefulSet") == [] and by_kind(manifests, "NetworkPolicy") == []
        return
    _, redis = redis_parts(manifests)
    assert redis["args"][:1] == ["redis-server"] and "--requirepass" in redis["args"]
    assert redis["args"][redis["args"].index("--requirepass") + 1] == "$(REDIS_PASSWORD)"  # Kubernetes expands it
    secret_name, key = password_ref(env_of(redis)["REDIS_PASSWORD"])
    assert password_ref(env_of(redis)["REDISCLI_AUTH"]) == (secret_name, key)  # the probe's redis-cli logs in
    [secret] = [m for m in by_kind(manifests, "Secret") if m["metadata"]["name"] == secret_name]
    password = secret["stringData"][key]
    assert len(password) >= 32 and password.isalnum()
    [deployment] = [m for m in by_kind(manifests, "Deployment") if m["metadata"]["name"] == "folio"]  # not the syncer
    workloads = [deployment["spec"]["template"]["spec"]] + [
        (job["spec"].get("jobTemplate", {}).get("spec") or job["spec"])["template"]["spec"]
        for job in by_kind(manifests, "Job") + by_kind(manifests, "CronJob")
    ]
    for pod in workloads:
        env = env_of(pod["containers"][0])
        names = list(env)
        assert password_ref(env["REDIS_PASSWORD"]) == (secret_name, key)
        assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL")  # defined first, so $(...) expands
        assert env["REDIS_URL"]["value"] == "redis://:$(REDIS_PASSWORD)@folio-redis:6379/0"
        assert password not in json.dumps(pod)


def test_a_given_password_or_secret_is_used_and_an_unsafe_one_refused() -> None:
    manifests = render({"redis": {"auth": {"password": "s3cret-Pass_word.1234567890"}}})
    _, redis = redis_parts(manifests)
    name, key = password_ref(env_of(redis)["REDIS_PASSWORD"])
    [secret] = [m for m in by_kind(manifests, "Secret") if m["metadata"]["name"] == name]
    assert secret["stringData"][key] == "s3cret-Pass_word.1234567890"

    manifests = render({"redis": {"auth": {"existingSecret": "my-redis", "existingSecretKey": "pw"}}})
    _, redis = redis_parts(manifests)
    assert password_ref(env_of(redis)["REDIS_PASSWORD"]) == ("my-redis", "pw")
    assert [m for m in by_kind(manifests, "Secret") if "redis" in m["metadata"]["name"]] == []

    with pytest.raises(HelmRenderError) as refused:
        render({"redis": {"auth": {"password": "p@ss/word:with#url-chars"}}})
    assert "redis.auth.password" in str(refused.value)


def labels_match(selector: dict, labels: dict) -> bool:
    """Kubernetes label selector semantics (matchLabels and the In / NotIn / Exists expressions)."""
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        present = key in labels
        ok = {
            "In": present and labels.get(key) in values,
            "NotIn": not present or labels.get(key) not in values,
            "Exists": present,
            "DoesNotExist": not present,
        }[operator]
        if not ok:
            return False
    return True


def test_only_folios_pods_may_reach_the_bundled_redis() -> None:
    manifests = render(
        example(CHART / "examples" / "http.yaml") | {"index": {"enabled": True, "documents": {"existingClaim": "docs"}}}
    )
    statefulset, _ = redis_parts(manifests)
    [policy] = by_kind(manifests, "NetworkPolicy")
    spec = policy["spec"]
    redis_labels = statefulset["spec"]["template"]["metadata"]["labels"]
    assert labels_match(spec["podSelector"], redis_labels) and spec["policyTypes"] == ["Ingress"]
    [rule] = spec["ingress"]
    assert [port["port"] for port in rule["ports"]] == [6379]
    assert all(set(peer) == {"podSelector"} for peer in rule["from"])  # no namespaceSelector or ipBlock: this release

    def admitted(labels: dict) -> bool:
        return any(labels_match(peer["podSelector"], labels) for peer in rule["from"])

    deployments = by_kind(manifests, "Deployment")  # serve and the syncer (its lease lives in Redis)
    [job] = by_kind(manifests, "Job")
    assert len(deployments) == 2 and all(admitted(d["spec"]["template"]["metadata"]["labels"]) for d in deployments)
    assert admitted(job["spec"]["template"]["metadata"]["labels"])
    other = {
        "app.kubernetes.io/name": "folio",
        "app.kubernetes.io/instance": "other-release",
        "app.kubernetes.io/component": "serve",
    }
    assert not admitted(other) and not admitted({"app": "anything"}) and not admitted(redis_labels)


def expanded(text: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion in args and env values."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m[1], m[0]), text)


@pytest.mark.slow  # starts a redis-server
async def test_the_rendered_redis_refuses_strangers_and_folios_rendered_url_gets_in(tmp_path: Path) -> None:
    manifests = render()
    _, container = redis_parts(manifests)
    [secret] = [m for m in by_kind(manifests, "Secret") if m["metadata"]["name"] == "folio-redis"]
    env = {"REDIS_PASSWORD": secret["stringData"]["redis-password"]}
    [deployment] = [m for m in by_kind(manifests, "Deployment") if m["metadata"]["name"] == "folio"]  # not the syncer
    url = expanded(env_of(deployment["spec"]["template"]["spec"]["containers"][0])["REDIS_URL"]["value"], env)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [expanded(arg, env) for arg in container["args"][1:]]
    server = subprocess.Popen(
        [REDIS_SERVER, *args, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert listening(port, server)
        stranger = Redis(host="127.0.0.1", port=port)
        with pytest.raises(redis.exceptions.AuthenticationError):
            await stranger.set("intake", "a turn of anyone")
        await stranger.aclose()
        folio = redis_client(url.replace("folio-redis:6379", f"127.0.0.1:{port}"))
        assert await folio.ping()
        await folio.aclose()
    finally:
        server.kill()
        server.wait()


def test_a_rolling_update_starts_the_new_pod_before_an_old_one_stops_taking_events() -> None:
    # Issue 32: a redeploy leaves no gap where it can. The Service's endpoints lag a SIGTERM: the old pod keeps
    # taking events (FOLIO_STOP_DELAY) while they catch up.
    manifests = render()
    [deployment] = by_kind(manifests, "Deployment")
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    [settings] = [m for m in by_kind(manifests, "ConfigMap") if m["metadata"]["name"].endswith("-settings")]
    assert float(settings["data"]["FOLIO_STOP_DELAY"]) > 0
