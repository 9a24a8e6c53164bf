"""Issue 33.6: the chart runs the syncer from the sources file (a ConfigMap) with rclone's config from a Secret,
keeps SQLite off shared volumes (serve and sync on one node), and never makes the release wait for indexing."""

from __future__ import annotations

import yaml

from tests.conftest import ROOT
from tests.ops.test_helm_chart import by_kind, render

SOURCES = "sources:\n  - {name: handbook, from: 'sharepoint:Handbook', container: handbook}\n"


def _pod(manifests: list[dict], name: str) -> dict:
    [deployment] = [m for m in by_kind(manifests, "Deployment") if m["metadata"]["name"] == name]
    return deployment["spec"]["template"]["spec"]


def test_the_syncer_reads_the_sources_configmap_and_rclone_config_from_a_secret() -> None:
    manifests = render({"sync": {"enabled": True, "sources": SOURCES, "rclone": {"existingSecret": "folio-rclone"}}})
    pod = _pod(manifests, "folio-sync")
    [sync] = pod["containers"]
    assert sync["args"][:4] == ["folio", "sync", "--every", "15m"]
    env = {item["name"]: item.get("value") for item in sync["env"]}  # REDIS_PASSWORD comes from its Secret
    mounts = {mount["name"]: mount["mountPath"] for mount in sync["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    assert env["FOLIO_SOURCES"] == f"{mounts['sources']}/sources.yaml"
    assert env["RCLONE_CONFIG"] == f"{mounts['rclone']}/rclone.conf"
    assert volumes["rclone"]["secret"]["secretName"] == "folio-rclone"
    [config] = [m for m in by_kind(manifests, "ConfigMap") if m["metadata"]["name"] == "folio-sources"]
    assert volumes["sources"]["configMap"]["name"] == "folio-sources"
    assert yaml.safe_load(config["data"]["sources.yaml"]) == yaml.safe_load(SOURCES)
    assert pod["terminationGracePeriodSeconds"] >= 60  # SIGTERM finishes the file being indexed
    [deployment] = [m for m in by_kind(manifests, "Deployment") if m["metadata"]["name"] == "folio-sync"]
    assert deployment["spec"]["replicas"] == 1 and deployment["spec"]["strategy"]["type"] == "Recreate"


def test_the_local_index_stays_on_one_node_and_azure_search_lets_pods_spread() -> None:
    manifests = render({"sync": {"enabled": True, "sources": SOURCES}})
    [claim] = by_kind(manifests, "PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    for name in ("folio", "folio-sync"):
        [term] = _pod(manifests, name)["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert term["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == "serve"
    spread = render({"settings": {"AZURE_SEARCH_ENDPOINT": "https://x.search.windows.net"}})
    assert "affinity" not in _pod(spread, "folio")


def test_the_index_job_does_not_hold_the_release_and_one_folder_does_not_stop_the_next() -> None:
    manifests = render({"index": {"enabled": True, "documents": {"existingClaim": "docs"}}})
    [job] = by_kind(manifests, "Job")
    assert "helm.sh/hook" not in job["metadata"].get("annotations", {})
    assert job["metadata"]["name"].startswith("folio-index-")  # one per revision: a Job's template cannot change
    script = job["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    assert "|| exit 1" not in script and "status=1" in script


def test_compose_runs_the_syncer_from_the_sources_file_and_ignores_local_documents() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    sync = compose["services"]["sync"]
    assert sync["command"][:3] == ["folio", "sync", "--every"]
    assert f"./sources.yaml:{sync['environment']['FOLIO_SOURCES']}:ro" in sync["volumes"]
    assert "folio-data:/data" in sync["volumes"] and "profiles" not in sync  # started by `up`, beside folio
    assert "|| exit 1" not in " ".join(compose["services"]["index"]["command"])
    for ignore in (".dockerignore", ".gitignore"):
        lines = (ROOT / ignore).read_text().split()
        assert {"documents/", "channels.yaml", "sources.yaml", "rclone.conf"} <= {line.lstrip("/") for line in lines}
