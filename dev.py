#!/usr/bin/env python3
"""Set-up and the two everyday commands, on a machine with only python3.

    python3 dev.py run     # Folio on its embedded defaults (terminal chat without Slack tokens)
    python3 dev.py test    # `ruff check`, `ruff format --check` and mypy on bot/, then the test suite
    python3 dev.py test --quick    # the same without the slow tests that start processes (a quick loop)
    python3 dev.py lock    # after changing dependencies in pyproject.toml: pin them again, with hashes
    python3 dev.py lock --upgrade    # every pin to the newest release allowed (then run the tests)

Both create ./.venv and install Folio into it on first use (and again when pyproject.toml or a lock file changes);
`test` adds the test tools. What is installed is exactly what requirements.lock (run) or requirements-dev.lock
(test) pins, each file checked against its hash. Extra arguments go to `folio serve` or to pytest. Ctrl-C ends
either without a traceback (exit 130).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".folio-installed"
INTERRUPTED = 130  # Ctrl-C, as shells report it
LINTED = ["bot", "tests", "benchmarks"]
FORMAT_CHECK = True  # `ruff format --check` joins `ruff check` in every `dev.py test` (and so in CI)
LOCKS = {False: ROOT / "requirements.lock", True: ROOT / "requirements-dev.lock"}  # dev: with the test tools
UV = "uv==0.13.8"  # resolves and hashes the lock files (`lock` only; installing needs pip alone)
# The fast tests run on this many pytest-xdist workers, each with its own embedded Redis: they spend about two thirds
# of their time waiting on sockets and timers, so three workers keep two cores busy (`-n 0` runs them in this process,
# for --pdb). The slow tests then run in this process, one at a time: they start processes and time them.
QUICK_WORKERS = 3
NO_TESTS = 5  # pytest's exit status when the selection holds no test (a path without slow tests, say)


def ensure_environment(*, dev: bool) -> None:
    """Create the virtual environment and install the project when missing or out of date; `dev` adds the test
    tools (`run` does without them, so the first start installs less)."""
    lock = LOCKS[dev]
    wanted = wanted_stamp()
    stamp = STAMP.read_text().split() if STAMP.exists() else []
    if stamp[:1] == [wanted] and (not dev or "dev" in stamp):
        return
    started = time.monotonic()
    if not (BIN / "python").exists():
        print("dev.py: creating .venv (a few seconds)", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print(f"dev.py: installing Folio into .venv: {', '.join(_requirements(dev=dev))}", flush=True)
    print(f"dev.py: {'about 70' if dev else 'about 50'} packages pinned in {lock.name}; 30-60 s, longer on a slow "
          "network. Only on first use and after pyproject.toml or the lock file changes.", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "--require-hashes", "-r", str(lock)], check=True)
    # Folio itself, built with the locked setuptools rather than whatever an isolated build would fetch.
    subprocess.run([*pip, "--no-deps", "--no-build-isolation", *(["-e", str(ROOT)] if dev else [str(ROOT)])],
                   check=True)  # fmt: skip
    STAMP.write_text(f"{wanted} dev" if dev else wanted)
    print(f"dev.py: installed in {time.monotonic() - started:.0f} s", flush=True)


def wanted_stamp() -> str:
    """What .venv's stamp says when it holds what pyproject.toml and the lock files ask for (both modes: a .venv
    installed for `test` serves `run` too)."""
    files = [ROOT / "pyproject.toml", *LOCKS.values()]
    return hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()


def _requirements(*, dev: bool) -> list[str]:
    """The names of the project's direct dependencies (and dev tools), from pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = [*project["dependencies"], *(project["optional-dependencies"]["dev"] if dev else [])]
    return [re.split(r"[<>=!~\[;\s]", spec, maxsplit=1)[0] for spec in specs]


def lock(options: list[str]) -> int:
    """Pin every dependency of pyproject.toml (and the test tools) again, with the hashes of every release file, for
    any platform: requirements.lock (the image and `run`) and requirements-dev.lock (`test`, CI). Pins already there
are kept unless `options` holds --upgrade (or --upgrade-package NAME)."""
    if not (BIN / "python").exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    python = str(BIN / "python")
    subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", "-q", UV], check=True)
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]  # pinned too ("-")
    for dev, path in LOCKS.items():
        extra = ["--extra", "dev"] if dev else []
        command = ["pip", "compile", "--quiet", "pyproject.toml", "-", *extra, "--universal", "--python-version",
                   "3.11", "--generate-hashes", "--custom-compile-command", "python3 dev.py lock", "-o", path.name,
                   *options]
        subprocess.run([python, "-m", "uv", *command], cwd=ROOT, input="\n".join(build), text=True, check=True)
    print("dev.py: requirements.lock and requirements-dev.lock written; run the tests, then commit them.", flush=True)
    return 0


def run(command: list[str]) -> int:
    """Run `command` and return its exit status. Ctrl-C reaches the command too (same terminal), which ends itself
    and reports it: wait for that rather than printing a traceback of our own."""
    child = subprocess.Popen(command, cwd=ROOT)
    while True:
        try:
            return child.wait()
        except KeyboardInterrupt:
            continue


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "lock"}:
        print(__doc__.strip())
        return 2
    if argv[0] == "lock":
        return lock(argv[1:])
    try:
        ensure_environment(dev=argv[0] == "test")
    except KeyboardInterrupt:
        print("\ndev.py: interrupted; the next run installs again.", file=sys.stderr)
        return INTERRUPTED
    except subprocess.CalledProcessError as exc:
        print(f"dev.py: installing failed (pip exited with {exc.returncode}); see pip's message above.",
              file=sys.stderr)
        return exc.returncode or 1
    if argv[0] == "run":
        return run([str(BIN / "folio"), "serve", *argv[1:]])
    return test(argv[1:])


def test(args: list[str]) -> int:
    """The linter and the type checker, then pytest with `args`: the fast tests on workers, then (unless `--quick`)
    the slow ones in this process; `--format` checks formatting too."""
    quick, formatted = "--quick" in args, "--format" in args or FORMAT_CHECK
    args = [arg for arg in args if arg not in {"--quick", "--format"}]
    ruff = [str(BIN / "ruff")]
    checks = [[*ruff, "check", "-q", *LINTED]] + ([[*ruff, "format", "--check", "-q", *LINTED]] if formatted else [])
    checks.append([str(BIN / "mypy")])  # files and strictness: [tool.mypy] in pyproject.toml
    for check in checks:
        status = run(check)
        if status != 0:
            name = "mypy" if check[0].endswith("mypy") else f"ruff {check[1]}"
            print(f"dev.py: `{name}` found problems (see above); tests not run.", file=sys.stderr)
            return status
    pytest = [str(BIN / "python"), "-m", "pytest"]
    fast = run([*pytest, "-m", "not bench and not slow", *_workers(), *args])
    if quick or fast not in (0, NO_TESTS):
        return fast
    slow = run([*pytest, "-m", "slow and not bench", *args])
    if (fast, slow) == (NO_TESTS, NO_TESTS):
        return NO_TESTS
    return 0 if slow == NO_TESTS else slow


def _workers() -> list[str]:
    """pytest-xdist's options for the fast tests: QUICK_WORKERS workers sharing out the tests as each frees up; none when
    REDIS_URL names one Redis for every worker (some tests use fixed key prefixes, as `folio serve` does)."""
    return [] if os.environ.get("REDIS_URL") else ["-n", str(QUICK_WORKERS), "--dist", "worksteal"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
