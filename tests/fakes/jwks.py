"""A fake OIDC identity provider on 127.0.0.1: it serves its signing keys (JWKS) and issues JWTs, the way Entra ID,
Google or Okta do, plus the forged and broken tokens an attacker would try.

    with FakeIdentityProvider() as idp:
        idp.jwks_url, idp.issuer, idp.audience                   # what FOLIO_OIDC_* are set to
        idp.token(email="ana@example.com")                       # RS256, kid of the served key, 1 h valid
        idp.token(email=..., audience="api://other")             # another app's token
        idp.forged(email=...)                                    # same kid, signed with a key the JWKS does not hold
        idp.unsigned(email=...), idp.hmac_with_public_key(...)   # alg none; HS256 keyed with the public key's PEM
        idp.fetches                                              # how many times the JWKS was fetched

Keys are RSA 2048 made once per process (key generation takes a while); tokens are signed by PyJWT.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from functools import cache
from http.server import BaseHTTPRequestHandler
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes import Loopback

KID = "folio-test-key-1"


@cache
def _key(name: str) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class FakeIdentityProvider:
    """An identity provider's JWKS endpoint and token minting."""

    def __init__(self, *, audience: str = "api://folio-test") -> None:
        self.audience = audience
        self.fetches = 0
        self.key = _key("served")
        self._loopback = Loopback(self._handler()).start()

    @property
    def url(self) -> str:
        return self._loopback.url

    @property
    def issuer(self) -> str:
        return f"{self.url}/tenant"

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/tenant/keys"

    def jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": KID, "use": "sig", "alg": "RS256"}]}

    def claims(self, email: str | None, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": f"sub-{email}",
            "iat": now,
            "nbf": now,
            "exp": now + 3600,
            "email": email,
            "email_verified": True,
        }
        claims.update(overrides)
        return {name: value for name, value in claims.items() if value is not None}

    def token(self, email: str | None = "ana@example.com", **overrides: Any) -> str:
        """A token signed with the served key; `overrides` change claims (aud=..., exp=..., iss=...)."""
        return jwt.encode(self.claims(email, **overrides), self.key, algorithm="RS256", headers={"kid": KID})

    def forged(self, email: str = "ana@example.com") -> str:
        """Signed with another key under the served key's id."""
        return jwt.encode(self.claims(email), _key("attacker"), algorithm="RS256", headers={"kid": KID})

    def unsigned(self, email: str = "ana@example.com") -> str:
        """alg none, no signature."""
        header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": KID}).encode())
        return f"{header}.{_b64(json.dumps(self.claims(email)).encode())}."

    def hmac_with_public_key(self, email: str = "ana@example.com") -> str:
        """HS256 keyed with the served public key's PEM: the algorithm-confusion attack."""
        pem = self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": KID}).encode())
        body = _b64(json.dumps(self.claims(email)).encode())
        signature = hmac.new(pem, f"{header}.{body}".encode(), hashlib.sha256).digest()
        return f"{header}.{body}.{_b64(signature)}"

    def close(self) -> None:
        self._loopback.stop()

    def __enter__(self) -> FakeIdentityProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path != "/tenant/keys":
                    self.send_error(404)
                    return
                fake.fetches += 1
                body = json.dumps(fake.jwks()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        return Handler
