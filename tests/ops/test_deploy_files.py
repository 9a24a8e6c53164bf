"""compose.yaml and the Dockerfile's HEALTHCHECK. Docker cannot run here: the compose file is checked as data, and the
health check's command is run as the container would run it (see tests/ops/test_health.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import yaml

from tests.conftest import ROOT


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
