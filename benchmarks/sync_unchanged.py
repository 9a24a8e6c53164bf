"""How long `folio sync` takes over a large remote, and how much memory it holds (issue 33.4).

    .venv/bin/python benchmarks/sync_unchanged.py --files 20000             # first sync, then an unchanged one
    .venv/bin/python benchmarks/sync_unchanged.py --files 200 --docx --jobs 1 --jobs 4   # conversion, --jobs wide

A generated folder (text files in 100 folders; with --docx, Word files LibreOffice converts) is served by
`rclone serve webdav` on loopback and synced as the remote `bench:` of a sources file, each run of `folio sync` in a
process of its own. For each run: wall seconds, the sync's peak memory (VmHWM of the folio process) and rclone's
(the largest child), and the files fetched (rclone's served log, one `GET from` per file read).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bot.sources.listing import default_program

WRAPPER = """
import resource, sys
from bot.cli import main
code = main(sys.argv[1:])
hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM')).split()[1]
child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f'MEMORY {hwm} {child}', file=sys.stderr)
sys.exit(code)
"""


def generate(folder: Path, files: int, docx: bool) -> None:
    """`files` files in 100 folders, each with its own words (so each is its own document)."""
    template = None
    if docx:
        from docx import Document  # python-docx, a dev dependency

        template = Document
    for number in range(files):
        path = folder / f"dept{number % 100:02d}" / f"policy-{number:05d}.{'docx' if docx else 'md'}"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"Policy {number}: the allowance code is A{number * 7919 % 100000:05d} for region {number % 13}."
        if template is not None:
            document = template()
            document.add_paragraph(text)
            document.save(path)
        else:
            path.write_text(text, encoding="utf-8")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_sync(work: Path, env: dict[str, str], log: Path, *extra: str) -> tuple[float, int, int, int, int]:
    """One `folio sync`: (seconds, folio peak KiB, rclone peak KiB, files fetched, exit status)."""
    fetched_before = log.read_text(errors="replace").count(": GET from")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, "sync", *extra], cwd=work, env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    memory = [line for line in done.stderr.splitlines() if line.startswith("MEMORY ")]
    folio_kib, rclone_kib = (int(value) for value in memory[-1].split()[1:]) if memory else (0, 0)
    print(done.stdout.strip(), file=sys.stderr)
    fetched = log.read_text(errors="replace").count(": GET from") - fetched_before
    return seconds, folio_kib, rclone_kib, fetched, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--docx", action="store_true", help="Word files (converted by LibreOffice) instead of text")
    parser.add_argument("--jobs", type=int, action="append", help="a first sync per value (default: 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        folder = work / "remote"
        started = time.perf_counter()
        generate(folder, args.files, args.docx)
        print(f"generated {args.files} files in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        port, log = free_port(), work / "served.log"
        server = subprocess.Popen(
            [
                default_program(),
                "serve",
                "webdav",
                str(folder),
                "--addr",
                f"127.0.0.1:{port}",
                "-v",
                "--log-file",
                str(log),
                "--config",
                str(work / "none.conf"),
            ]
        )
        try:
            time.sleep(1.0)
            for jobs in args.jobs or [1]:
                data = work / f"data-{jobs}"
                env = {
                    **os.environ,
                    "FOLIO_DATA_DIR": str(data),
                    "FOLIO_SAMPLE_CORPUS": "false",
                    "FOLIO_SOURCES": str(work / "sources.yaml"),
                    "RCLONE_CONFIG": str(work / "rclone.conf"),
                    "RCLONE_CONFIG_BENCH_TYPE": "webdav",
                    "RCLONE_CONFIG_BENCH_URL": f"http://127.0.0.1:{port}",
                    "RCLONE_CONFIG_BENCH_VENDOR": "rclone",
                }
                env.pop("REDIS_URL", None)  # the data folder's embedded Redis holds the lease
                (work / "sources.yaml").write_text("sources:\n  - {name: bench, from: 'bench:', container: bench}\n")
                for label in (f"first sync, --jobs {jobs}", "unchanged sync"):
                    seconds, folio_kib, rclone_kib, fetched, code = run_sync(work, env, log, "--jobs", str(jobs))
                    print(
                        f"| {args.files} {'docx' if args.docx else 'md'} | {label} | {seconds:.1f} s | "
                        f"{folio_kib / 1024:.0f} MiB | {rclone_kib / 1024:.0f} MiB | {fetched} | {code} |"
                    )
        finally:
            server.terminate()
            server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
