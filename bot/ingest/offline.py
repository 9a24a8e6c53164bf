"""The converters (LibreOffice, OCRmyPDF) never reach the network, whatever a document links to. Three layers:

1. LibreOffice's own settings, written into every private profile before its first run (`write_profile`): links
   from documents in untrusted places are blocked (`BlockUntrustedRefererLinks`, with no trusted place at all:
   `SecureURL` empty), Writer and Calc never update links or fields on load, no macro or active content runs. Without
   them LibreOffice fetches a .docx's "Link to file" picture, an .odt's linked `draw:image`, OLE links and the
   stylesheet and pictures of a web page saved as .doc, from wherever they point (169.254.169.254 included). With
   them alone, LibreOffice 7.4 still fetches the pictures Calc and Impress draw and a web page's stylesheet and
   background: hence the next layers.
2. A network of its own (`no_network`): `unshare --net` (with `--map-root-user` where the user is not root) starts the
   converter in a network namespace whose only interface, loopback, is down, so nothing connects anywhere.
3. Where the system forbids namespaces (Docker's default seccomp profile does), the log says so once, and the
   converters run with `http_proxy` and its kin naming a loopback port this process holds bound and never listens
   on (`_nowhere`): LibreOffice's fetches go there and are refused.
The converters also get only the environment they need (`environment`), never the run's secrets. A picture linked by
a local path is still drawn by Calc, Impress and the web-page import (docs/security.md says so).

tests/ingest/test_no_fetch.py converts a document of every kind, each linking to a listener, with and without a
namespace, and the listener must hear nothing.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import socket
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)

PROBE_SECONDS = 10.0
# Names and values from LibreOffice's schema (officecfg Common.xcs, Writer.xcs, Calc.xcs). Writer's Update/Link:
# 0 never, 1 on request, 2 always; Calc's: 0 always, 1 never, 2 on request. `finalized`: nothing later changes it.
# A name this LibreOffice does not know (DisableActiveContent came after 7.4) is ignored.
PROFILE_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">\
<prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse" oor:finalized="true"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">\
<prop oor:name="SecureURL" oor:op="fuse" oor:finalized="true"><value/></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">\
<prop oor:name="DisableMacrosExecution" oor:op="fuse" oor:finalized="true"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">\
<prop oor:name="MacroSecurityLevel" oor:op="fuse" oor:finalized="true"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">\
<prop oor:name="DisableActiveContent" oor:op="fuse" oor:finalized="true"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Update">\
<prop oor:name="Link" oor:op="fuse" oor:finalized="true"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Update">\
<prop oor:name="Field" oor:op="fuse" oor:finalized="true"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Content/Update">\
<prop oor:name="Link" oor:op="fuse" oor:finalized="true"><value>1</value></prop></item>
</oor:items>
"""
SETTINGS_FILE = Path("user") / "registrymodifications.xcu"
_PROXIES = ("http_proxy", "https_proxy", "ftp_proxy", "all_proxy")
_HELD: list[socket.socket] = []  # the socket behind _nowhere(), kept open while the process lives
# What the converters need from the environment: where programs, temporary files and language data are, the locale.
_KEPT = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LANGUAGE",
        "TMPDIR",
        "TZ",
        "TESSDATA_PREFIX",
        "OMP_THREAD_LIMIT",
        "SAL_USE_VCLPLUGIN",
    }
)


def write_profile(folder: Path) -> None:
    """Make `folder` a LibreOffice profile holding the settings above (before LibreOffice first starts in it)."""
    path = folder / SETTINGS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PROFILE_SETTINGS, encoding="utf-8")


def environment() -> dict[str, str]:
    """The environment a converter runs with: this process's paths and locale, no secret, every proxy nowhere."""
    # Read here, not from Settings: this is what the child process inherits, filtered, not Folio's configuration.
    kept = {name: value for name, value in os.environ.items() if name in _KEPT or name.startswith("LC_")}
    nowhere = _nowhere()
    proxies = {name: nowhere for name in _PROXIES} | {name.upper(): nowhere for name in _PROXIES}
    return kept | proxies | {"no_proxy": "", "NO_PROXY": ""}


def no_network() -> tuple[str, ...]:
    """The words to put before a converter's command so it runs without a network; () where the system forbids it."""
    return _namespace()


@functools.lru_cache(maxsize=1)
def _nowhere() -> str:
    """A proxy address nothing answers on: a loopback port bound by this process for its lifetime, never listened
    on, so a connection to it is refused and no other program can take the port. (LibreOffice reads port 0 as "no
    port" and then fetches directly.)"""
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.bind(("127.0.0.1", 0))
    _HELD.append(held)
    return f"http://127.0.0.1:{held.getsockname()[1]}"


@functools.lru_cache(maxsize=1)
def _namespace() -> tuple[str, ...]:
    unshare = shutil.which("unshare")
    if unshare is None:
        log.warning(
            "converters run with the network: `unshare` (util-linux) is not installed; "
            "LibreOffice's settings and a proxy to nowhere still refuse linked content"
        )
        return ()
    said = ""
    for prefix in ((unshare, "--net"), (unshare, "--net", "--map-root-user")):
        try:
            done = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=PROBE_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            said = str(exc) or type(exc).__name__
            continue
        if done.returncode == 0:
            return prefix
        said = " ".join(done.stderr.split())[:200] or f"exit {done.returncode}"
    log.warning(
        "converters run with the network: this system does not allow a network namespace (%s); "
        "LibreOffice's settings and a proxy to nowhere still refuse linked content",
        said,
    )
    return ()
