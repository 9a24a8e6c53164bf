"""compose.yaml and the Dockerfile's HEALTHCHECK. Docker cannot run here: the compose file is checked as data, and the
health check's command is run as the container would run it (see tests/ops/test_health.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from bot.cli import main
from bot.config import Settings
from tests.conftest import ROOT
from tests.ops.test_startup import one_line, slack_env, write_env  # noqa: F401  (slack_env: a fixture)


def healthcheck_command() -> list[str]:
    """The Dockerfile's HEALTHCHECK command, with this Python for the image's."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    [line] = [line for line in text.splitlines() if line.startswith("HEALTHCHECK")]
    command = json.loads(line.split(" CMD ", 1)[1])
    return [sys.executable if part == "python" else part for part in command]


def run_healthcheck(port: int) -> int:
    """The exit code Docker would see: 0 healthy, anything else unhealthy."""
    env = {**os.environ, "PORT": str(port)}
    env.pop("FOLIO_METRICS_PORT", None)
    return subprocess.run(healthcheck_command(), env=env, capture_output=True, timeout=30).returncode


def test_compose_runs_folio_on_a_real_redis_with_data_on_volumes() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    folio, redis = compose["services"]["folio"], compose["services"]["redis"]

    assert folio["environment"]["REDIS_URL"] == "redis://redis:6379/0"
    assert folio["depends_on"]["redis"]["condition"] == "service_healthy" and "healthcheck" in redis
    assert "redis-data:/data" in redis["volumes"] and "folio-data:/data" in folio["volumes"]
    assert set(compose["volumes"]) == {"folio-data", "redis-data"}
    assert {"3000:3000", "9090:9090"} <= set(folio["ports"]) and folio["environment"]["FOLIO_METRICS_PORT"] == "9090"
    assert "--appendonly" in redis["command"]


def test_the_image_checks_readiness_and_ships_the_manifest_doctor_compares() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()

    assert "/readyz" in " ".join(healthcheck_command())
    assert "manifest.yaml" in dockerfile.split("COPY pyproject.toml", 1)[1].splitlines()[0]


def test_the_image_and_ci_install_every_converter_folio_names() -> None:
    """The packages a skipped file names are those the image and CI install (the image cannot be built here)."""
    from bot.ingest import kinds

    wanted = {*kinds.PACKAGES.values(), *kinds.OCR_PACKAGES.split()}
    for installer in ("Dockerfile", ".ci/run"):
        text = (ROOT / installer).read_text().replace("$OCR_LANGUAGES", "tesseract-ocr-eng")
        assert wanted <= set(re.split(r'[\s"\\]+', text)), installer


# --- issue 23, finding 5 and build item 2: a deploy an operator can repeat ------------------------------------------
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
DRAIN = 30  # seconds: bot.app.SHUTDOWN_GRACE, what `folio serve` gives running turns on SIGTERM


def dockerfile_lines() -> list[str]:
    """The Dockerfile's instructions, continuation lines joined, comments left out."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_every_base_image_is_pinned_by_digest() -> None:
    images = [line.split()[1] for line in dockerfile_lines() if line.upper().startswith("FROM ")]
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    images += [service["image"] for service in compose["services"].values() if "build" not in service]  # pulled
    assert images and all(DIGEST.search(image) for image in images), images


def test_the_image_installs_exactly_the_locked_requirements() -> None:
    runs = [line for line in dockerfile_lines() if line.startswith("RUN ")]
    installs = [part.strip() for run in runs for part in run.split("&&") if "pip install" in part]
    assert any("--require-hashes" in part and "-r requirements.lock" in part for part in installs), installs
    assert all("--require-hashes" in part or "--no-deps" in part for part in installs), installs  # nothing unpinned
    assert "COPY requirements.lock" in " ".join(dockerfile_lines())


def test_the_lock_files_pin_every_dependency_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]  # Folio is built too
    runtime, dev = project["dependencies"] + build, project["optional-dependencies"]["dev"]
    for lock, specs in {"requirements.lock": runtime, "requirements-dev.lock": runtime + dev}.items():
        pins = locked(ROOT / lock)
        wanted = {re.split(r"[<>=!~\[;\s]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in specs}
        assert wanted <= pins.keys(), (lock, wanted - pins.keys())
        assert all(hashes for hashes in pins.values()), lock


def locked(path: Path) -> dict[str, list[str]]:
    """name -> its sha256 hashes, for every `name==version` a lock file pins."""
    pins: dict[str, list[str]] = {}
    for block in re.split(r"\n(?=\S)", path.read_text()):
        found = re.match(r"([A-Za-z0-9_.-]+)==\S+", block)
        if found:
            pins[found.group(1).lower().replace("_", "-")] = re.findall(r"--hash=sha256:([0-9a-f]{64})", block)
    return pins


def test_dev_py_and_ci_install_from_the_lock_files() -> None:
    dev = (ROOT / "dev.py").read_text()
    assert '"--require-hashes", "-r"' in dev and "requirements-dev.lock" in dev and "requirements.lock" in dev
    assert "python3 dev.py test" in (ROOT / ".ci" / "run").read_text()


def test_the_image_runs_as_a_non_root_user_and_checks_readiness() -> None:
    lines = dockerfile_lines()
    [user] = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert user not in {"root", "0"} and not user.startswith("0:")
    assert any(line.startswith("HEALTHCHECK ") and "/readyz" in line for line in lines)


def test_the_image_does_not_answer_from_the_sample_corpus() -> None:
    text = " ".join(dockerfile_lines())
    assert "channels.example.yaml" not in text  # no policy of ours stands in for the operator's
    assert "FOLIO_SAMPLE_CORPUS=false" in text


def test_compose_creates_env_from_the_example_and_outlasts_the_drain() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    folio = compose["services"]["folio"]
    grace = re.fullmatch(r"(\d+)s", folio["stop_grace_period"])
    assert grace and int(grace.group(1)) > DRAIN
    assert folio["read_only"] is True and "/tmp" in folio["tmpfs"]
    example = (ROOT / ".env.example").read_text()
    names = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, flags=re.MULTILINE))  # set, or shown commented
    assert {"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "OPENAI_API_KEY"} <= names
    assert set(Settings.model_fields) >= {name.lower() for name in names}, names  # every name is a setting
    assert "cp .env.example .env" in (ROOT / "docs" / "operators.md").read_text()


def test_compose_has_an_index_service_over_a_documents_volume() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    index = compose["services"]["index"]
    assert "folio-data:/data" in index["volumes"]  # the index folio searches
    assert any(volume.startswith("./documents:/documents") for volume in index["volumes"])
    assert "folio index" in " ".join(index["command"])
    assert index["profiles"] == ["index"]  # runs when asked: `docker compose run --rm index`


def test_serve_without_a_channel_policy_refuses_to_start(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    slack_env: dict[str, str],  # noqa: F811
) -> None:
    missing = tmp_path / "config" / "channels.yaml"  # the image's path, nothing mounted there
    write_env(tmp_path, **slack_env, FOLIO_CHANNELS_FILE=str(missing))
    (tmp_path / "channels.yaml").unlink()

    assert main(["serve"]) == 2

    assert one_line(capsys) == (
        f"folio: Channel policy file {missing} does not exist. Copy channels.example.yaml to {missing} "
        "or set FOLIO_CHANNELS_FILE to its path."
    )


def index_commands() -> dict[str, str]:
    """The shell command compose's `index` service and the chart's indexing Job run, as /bin/sh gets them."""
    from tests.ops.test_helm_chart import by_kind, render

    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["index"]["command"]
    job = by_kind(render({"index": {"enabled": True, "documents": {"existingClaim": "docs"}}}), "Job")[0]
    chart = job["spec"]["template"]["spec"]["containers"][0]["command"]
    return {"compose": compose[2].replace("$$", "$"), "helm": chart[2]}  # compose writes $ as $$


@pytest.mark.parametrize("where", ["compose", "helm"])
@pytest.mark.slow  # starts a process
def test_the_index_job_indexes_each_folder_into_the_container_of_its_name(tmp_path: Path, where: str) -> None:
    documents, data, bin_dir = tmp_path / "documents", tmp_path / "data", tmp_path / "bin"
    for container, name in [("handbook", "refund_policy_2026.pdf"), ("legal", "supplier_contract_acme.pdf")]:
        (documents / container).mkdir(parents=True)
        (documents / container / name).write_bytes((ROOT / "bot" / "sample_corpus" / name).read_bytes())
    bin_dir.mkdir()
    (bin_dir / "folio").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m bot "$@"\n')  # the image's `folio`
    (bin_dir / "folio").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "FOLIO_DATA_DIR": str(data),
        "FOLIO_SAMPLE_CORPUS": "false",
    }
    command = index_commands()[where].replace("/documents", str(documents))

    subprocess.run(["sh", "-c", command], env=env, cwd=tmp_path, check=True, capture_output=True, timeout=120)

    listed = subprocess.run(
        [sys.executable, "-m", "bot", "list", "--json"],
        env=env,
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert {(row["container"], row["file"]) for row in json.loads(listed)} == {
        ("handbook", "refund_policy_2026.pdf"),
        ("legal", "supplier_contract_acme.pdf"),
    }


def test_compose_runs_two_workers_so_that_a_dead_one_never_closes_the_port() -> None:
    folio = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["folio"]
    command = folio["command"]
    assert command[:2] == ["folio", "serve"] and int(command[command.index("--workers") + 1]) >= 2
