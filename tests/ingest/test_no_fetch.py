"""Indexing never reaches the network: a folder holding a document of every kind Folio reads, each linking pictures,
frames, OLE objects, sections, templates, stylesheets and web services to a listener on loopback (standing for
http://169.254.169.254/latest/meta-data/...), is indexed with LibreOffice and OCR for real, and the listener hears
nothing: not an OPTIONS, not a HEAD, not a connection. The linked documents' own text is still indexed.

Each run is done twice: as the system allows (the converters in a network namespace of their own where `unshare`
works), and on a system without `unshare` (a PATH without it, as in a container that forbids namespaces), where
LibreOffice's own settings and a proxy that leads nowhere must hold alone.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.ingest import linked_files
from tests.ingest.test_office_and_scans import WHY_NOT

pytestmark = pytest.mark.slow

# Web pages saved under a spreadsheet's name that LibreOffice or openpyxl cannot read: refused by name, fetching nothing.
REFUSED = ("web-page.ods", "web-page.xlsx")
# What LibreOffice 7.4 still fetched with its link settings alone (pictures Calc and Impress draw, a web page's
# stylesheet and background), and the .docx of the issue: the run without a network namespace converts these.
SETTINGS_ALONE_FAILED = ("linked.docx", "linked.ods", "linked.odp", "flat-sheet.xls", "web-page.doc")


class Listener:
    """An HTTP server on loopback that answers every request with a picture and remembers every connection."""

    def __init__(self) -> None:
        self.heard: list[str] = []
        picture = linked_files.png()
        heard = self.heard

        class Handler(BaseHTTPRequestHandler):
            def answer(self) -> None:
                heard.append(f"{self.command} {self.path}")
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(picture)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(picture)

            do_GET = do_HEAD = do_OPTIONS = do_POST = do_PROPFIND = answer

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def verify_request(self, request: socket.socket | tuple[bytes, socket.socket], address: object) -> bool:
                heard.append(f"connection from {address}")  # even one that never sends a request
                return True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> Listener:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    for program, why in WHY_NOT.items():
        if shutil.which(program) is None:
            pytest.skip(why)
    with Listener() as listening:
        yield listening


def index(folder: Path, data: Path, *, path: str | None = None) -> subprocess.CompletedProcess[str]:
    """`folio index FOLDER` in a process of its own (so its converters are probed afresh)."""
    env = {**os.environ, "FOLIO_DATA_DIR": str(data), "FOLIO_SAMPLE_CORPUS": "false", "PYTHONPATH": str(ROOT)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "bot", "index", str(folder), "--container", "linked"],
        capture_output=True,
        text=True,
        env=env,
        cwd=data.parent,
        timeout=600,
        check=False,
    )


def indexed(done: subprocess.CompletedProcess[str], made: list[Path]) -> None:
    """Every file indexed but the refused web pages (the mail's attachment too), each refused by name."""
    assert done.stdout.startswith(f"{len(made) - len(REFUSED) + 1} files indexed"), (done.stdout, done.stderr)
    refused = [line.split(": ")[2] for line in done.stderr.splitlines() if line.startswith("folio: not indexed: ")]
    assert refused == sorted(REFUSED)


def test_indexing_a_document_of_every_kind_fetches_none_of_its_links(listener: Listener, tmp_path: Path) -> None:
    folder = tmp_path / "linked"
    folder.mkdir()
    made = linked_files.every_kind(folder, listener.base)

    done = index(folder, tmp_path / ".folio")

    assert listener.heard == []
    indexed(done, made)
    kept = tmp_path / ".folio" / "documents" / "linked"
    assert sorted(path.name for path in kept.glob("linked.*.pdf")) == [
        "linked.docx.pdf",
        "linked.odp.pdf",
        "linked.ods.pdf",
        "linked.odt.pdf",
        "linked.pptx.pdf",
        "linked.rtf.pdf",
        "linked.xlsx.pdf",
    ]


def test_without_a_network_namespace_linked_content_is_still_refused(listener: Listener, tmp_path: Path) -> None:
    """A PATH holding every program but `unshare`: LibreOffice's settings and the proxy to nowhere hold alone."""
    programs = tmp_path / "bin"
    programs.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for program in Path(folder).glob("*") if Path(folder).is_dir() else ():
            if program.name != "unshare" and not (programs / program.name).exists():
                (programs / program.name).symlink_to(program)
    folder = tmp_path / "linked"
    folder.mkdir()
    for path in linked_files.every_kind(folder, listener.base):
        if path.name not in SETTINGS_ALONE_FAILED:
            path.unlink()

    done = index(folder, tmp_path / ".folio", path=str(programs))

    assert listener.heard == []
    assert done.stdout.startswith(f"{len(SETTINGS_ALONE_FAILED)} files indexed ("), (done.stdout, done.stderr)
    assert "converters run with the network: `unshare` (util-linux) is not installed" in done.stderr
    assert "proxy to nowhere" in done.stderr
