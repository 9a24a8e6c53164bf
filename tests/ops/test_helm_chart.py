"""The Helm chart (deploy/helm/folio) renders with Helm's own engine and every manifest is valid Kubernetes.

Rendered with the defaults and each example value file (helm-python-sdk: Helm's Go SDK, no helm binary), every
manifest validated against the Kubernetes schemas (kubernetes-validate's bundled, offline copies, strict: an unknown
field fails). The Deployment is then read as an operator would check it: probes, grace period, secrets.
"""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from helm_python import Chart, HelmRenderError
from helm_python import lint as helm_lint

from tests.conftest import ROOT

CHART = ROOT / "deploy" / "helm" / "folio"
EXAMPLES = sorted((CHART / "examples").glob("*.yaml"))
KUBERNETES = "1.30.0"  # the oldest Kubernetes the chart supports (autoscaling/v2, policy/v1, batch/v1 CronJob)
DRAIN = 30  # seconds `folio serve` lets running turns finish after SIGTERM (bot.app.SHUTDOWN_GRACE)
SECRET_NAMES = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY",
                "AZURE_SEARCH_KEY", "FOLIO_LINK_SECRET")  # fmt: skip


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
    assert {"HorizontalPodAutoscaler", "Job", "CronJob", "StatefulSet"} <= kinds
    modes = {example(path)["slack"]["mode"] for path in EXAMPLES}
    assert modes == {"http", "socket"}


@pytest.mark.parametrize("values", [None, *EXAMPLES], ids=["defaults", *(path.stem for path in EXAMPLES)])
def test_the_deployment_probes_health_outlasts_the_drain_and_reads_secrets_by_reference(values: Path | None) -> None:
    given = example(values) if values else {}
    manifests = render(given)
    [deployment] = by_kind(manifests, "Deployment")
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
    assert all("@" not in value for value in inline.values())  # nor a Redis URL with a password
    settings = [m for m in by_kind(manifests, "ConfigMap") if m["metadata"]["name"] == "folio-settings"]
    assert not set(SECRET_NAMES) & settings[0]["data"].keys()
    assert folio["securityContext"]["readOnlyRootFilesystem"] is True and pod["securityContext"]["runAsNonRoot"]
    assert bool(by_kind(manifests, "Secret")) == (secret == "folio-secrets")  # yours, or the chart's: not both


def test_the_channel_policy_is_mounted_where_folio_reads_it() -> None:
    manifests = render({"channels": "channels:\n  C0HANDBOOK:\n    container: handbook\n"})
    [deployment] = by_kind(manifests, "Deployment")
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


def test_a_rolling_update_starts_the_new_pod_before_an_old_one_stops_taking_events() -> None:
    # Issue 32: a redeploy leaves no gap where it can. The Service's endpoints lag a SIGTERM: the old pod keeps
    # taking events (FOLIO_STOP_DELAY) while they catch up.
    manifests = render()
    [deployment] = by_kind(manifests, "Deployment")
    assert deployment["spec"]["strategy"] == {"type": "RollingUpdate",
                                              "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}  # fmt: skip
    [settings] = [m for m in by_kind(manifests, "ConfigMap") if m["metadata"]["name"].endswith("-settings")]
    assert float(settings["data"]["FOLIO_STOP_DELAY"]) > 0
