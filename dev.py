#!/usr/bin/env python3
"""Set-up and the two everyday commands, on a machine with only python3.

    python3 dev.py run     # Folio on its embedded defaults (terminal chat without Slack tokens)
    python3 dev.py test    # the test suite

Both create ./.venv and install Folio with its dev dependencies on first use (and again when pyproject.toml changes).
Extra arguments go to `folio serve` or to pytest.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".folio-installed"


def ensure_environment() -> None:
    """Create the virtual environment and install the project when missing or out of date."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    if not (BIN / "python").exists():
        print("dev.py: creating .venv", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("dev.py: installing Folio and its dependencies into .venv", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "-e", f"{ROOT}[dev]"], check=True)
    STAMP.write_text(wanted)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test"}:
        print(__doc__.strip())
        return 2
    ensure_environment()
    if argv[0] == "run":
        command = [str(BIN / "folio"), "serve", *argv[1:]]
    else:
        command = [str(BIN / "python"), "-m", "pytest", *argv[1:]]
    return subprocess.call(command, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
